import type { Config } from "../config/config-schema.js";
import { type CatalogUpdate, DefinitionCatalog } from "./definition-catalog.js";
import { agentFolders, listAgentFiles, listPresetFiles } from "./definition-files.js";
import type { DefinitionSnapshot } from "./definition-snapshot.js";
import { loadGrammarForCommands } from "./command-grammar.js";
import type { ParsedAgentCache } from "./parsed-agent-cache.js";
import { readAgentFile, readAll, readPresetFile } from "./read-parsed-files.js";

/**
 * Reads every agent and preset once (no watcher) and validates them together. A bad file is
 * reported in its status and never stops the others from loading.
 */
export async function loadDefinitions(config: Config): Promise<DefinitionSnapshot> {
  const catalog = new DefinitionCatalog(config);
  catalog.apply(await readDefinitionFolders(config));
  const snapshot = catalog.snapshot();
  await loadGrammarForCommands(config, snapshot);
  return snapshot;
}

/**
 * Every agent and preset file of the configured folders, read and parsed; with a cache, agent files
 * unchanged since it was written are taken from it.
 */
export async function readDefinitionFolders(
  config: Config,
  cache?: ParsedAgentCache,
): Promise<CatalogUpdate> {
  const [agentFiles, presetFiles] = await Promise.all([
    listAgentFiles(agentFolders(config)),
    listPresetFiles(config.presets_dir),
  ]);
  return {
    agents: readAll(agentFiles, (file) => readAgentFile(file, cache)),
    presets: readAll(presetFiles, readPresetFile),
  };
}
