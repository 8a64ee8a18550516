import type { Config } from "../config/config-schema.js";
import type { ParsedPresetFile } from "../presets/parse-preset-file.js";
import { presetNameOf } from "../presets/parse-preset-file.js";
import { agentIdOf } from "./agent-id.js";
import { DefinitionCatalog } from "./definition-catalog.js";
import { agentFolders, listAgentFiles, listPresetFiles } from "./definition-files.js";
import type { DefinitionSnapshot } from "./definition-snapshot.js";
import type { ParsedAgentFile } from "./parse-agent-file.js";
import { readAgentFile, readPresetFile } from "./read-parsed-files.js";

/** One agent's definitions, and the ids of every agent file for a did-you-mean. */
export interface AgentDefinitions {
  /** The agent, the agents it may call through `agents:` (transitively) and their presets. */
  snapshot: DefinitionSnapshot;
  /** Every agent id in the folders, from the file names (those files are not read). */
  agentIds: string[];
}

/**
 * Reads what one run of `id` needs and nothing else: its file (every file of that id, so two files
 * with one name are reported as the daemon reports them), the agents it may call through `agents:`,
 * transitively, and the presets those name, with their `extends` chains. The folders are listed,
 * not read: a folder of 1,000 agents costs a directory walk, and a broken file of another agent
 * does not stop this one.
 */
export async function loadAgentDefinitions(config: Config, id: string): Promise<AgentDefinitions> {
  const [agentFiles, presetFiles] = await Promise.all([
    listAgentFiles(agentFolders(config)),
    listPresetFiles(config.presets_dir),
  ]);
  const agentFilesById = groupBy(agentFiles, agentIdOf);
  const presetFilesByName = groupBy(presetFiles, presetNameOf);
  const agents = new Map<string, ParsedAgentFile | undefined>();
  const presets = new Map<string, ParsedPresetFile | undefined>();
  const presetsWanted: string[] = [];
  const agentsWanted = [id];
  const seen = new Set<string>();
  for (let next = agentsWanted.pop(); next !== undefined; next = agentsWanted.pop()) {
    if (seen.has(next)) continue;
    seen.add(next);
    for (const file of agentFilesById.get(next) ?? []) {
      const parsed = readAgentFile(file);
      agents.set(file, parsed);
      agentsWanted.push(...(parsed?.frontmatter?.agents ?? []));
      if (parsed?.frontmatter?.preset !== undefined) presetsWanted.push(parsed.frontmatter.preset);
    }
  }
  for (let next = presetsWanted.pop(); next !== undefined; next = presetsWanted.pop()) {
    if (seen.has(`preset:${next}`)) continue;
    seen.add(`preset:${next}`);
    // A preset that does not exist: every preset is read, so the error can suggest the nearest name.
    const files = presetFilesByName.get(next) ?? presetFiles;
    for (const file of files) {
      if (presets.has(file)) continue;
      const parsed = readPresetFile(file);
      presets.set(file, parsed);
      if (parsed?.preset?.extends !== undefined) presetsWanted.push(parsed.preset.extends);
    }
  }
  const catalog = new DefinitionCatalog(config);
  catalog.apply({ agents, presets });
  return { snapshot: catalog.snapshot(), agentIds: [...agentFilesById.keys()] };
}

function groupBy(files: readonly string[], keyOf: (file: string) => string): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const file of files) {
    const key = keyOf(file);
    const group = groups.get(key);
    if (group) group.push(file);
    else groups.set(key, [file]);
  }
  return groups;
}
