import {
  type ParsedPresetFile,
  parsePresetFile,
  unreadablePresetFile,
} from "../presets/parse-preset-file.js";
import type { ParsedAgentCache } from "./parsed-agent-cache.js";
import { type ParsedAgentFile, parseAgentFile, unreadableAgentFile } from "./parse-agent-file.js";
import { readDefinitionFile } from "../schema/read-definition-file.js";

/**
 * Reads and parses an agent file; undefined when it no longer exists. Never throws. With a cache,
 * an unchanged file is taken from it instead of parsed, and a parsed one is remembered.
 */
export function readAgentFile(file: string, cache?: ParsedAgentCache): ParsedAgentFile | undefined {
  try {
    const content = readDefinitionFile(file, "DEFINITION_INVALID");
    if (!content) return undefined;
    const cached = cache?.lookup(file, content);
    if (cached) return cached;
    const parsed = parseAgentFile(file, content);
    cache?.remember(parsed);
    return parsed;
  } catch (error) {
    return unreadableAgentFile(file, error);
  }
}

/** Reads and parses a preset file; undefined when it no longer exists. Never throws. */
export function readPresetFile(file: string): ParsedPresetFile | undefined {
  try {
    const content = readDefinitionFile(file, "PRESET_INVALID");
    return content && parsePresetFile(file, content);
  } catch (error) {
    return unreadablePresetFile(file, error);
  }
}

/** Reads many files into a file → result map (undefined: the file is gone). */
export function readAll<Parsed>(
  files: readonly string[],
  read: (file: string) => Parsed | undefined,
): Map<string, Parsed | undefined> {
  return new Map(files.map((file) => [file, read(file)]));
}
