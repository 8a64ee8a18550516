import {
  type ParsedPresetFile,
  parsePresetFile,
  unreadablePresetFile,
} from "../presets/parse-preset-file.js";
import { type ParsedAgentFile, parseAgentFile, unreadableAgentFile } from "./parse-agent-file.js";
import { readDefinitionFile } from "./read-definition-file.js";

/** Files read at once: enough to overlap disk waits without flooding the event loop. */
const READ_CONCURRENCY = 32;

/** Reads and parses an agent file; undefined when it no longer exists. Never throws. */
export async function readAgentFile(file: string): Promise<ParsedAgentFile | undefined> {
  try {
    const content = await readDefinitionFile(file, "DEFINITION_INVALID");
    return content && parseAgentFile(file, content);
  } catch (error) {
    return unreadableAgentFile(file, error);
  }
}

/** Reads and parses a preset file; undefined when it no longer exists. Never throws. */
export async function readPresetFile(file: string): Promise<ParsedPresetFile | undefined> {
  try {
    const content = await readDefinitionFile(file, "PRESET_INVALID");
    return content && parsePresetFile(file, content);
  } catch (error) {
    return unreadablePresetFile(file, error);
  }
}

/** Reads many files, a few at a time, into a file → result map (undefined: the file is gone). */
export async function readAll<Parsed>(
  files: readonly string[],
  read: (file: string) => Promise<Parsed | undefined>,
): Promise<Map<string, Parsed | undefined>> {
  const results = new Map<string, Parsed | undefined>();
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++] as string;
      results.set(file, await read(file));
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, files.length) }, worker));
  return new Map(files.map((file) => [file, results.get(file)]));
}
