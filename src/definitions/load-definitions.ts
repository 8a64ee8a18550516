import type { Config } from "../config/config-schema.js";
import { DefinitionCatalog } from "./definition-catalog.js";
import { listAgentFiles, listPresetFiles } from "./definition-files.js";
import type { DefinitionSnapshot } from "./definition-snapshot.js";
import { readAgentFile, readAll, readPresetFile } from "./read-parsed-files.js";

/**
 * Reads every agent and preset once (no watcher) and validates them together. A bad file is
 * reported in its status and never stops the others from loading.
 */
export async function loadDefinitions(config: Config): Promise<DefinitionSnapshot> {
  const catalog = await loadCatalog(config);
  return catalog.snapshot();
}

/** The catalog filled from the folders, for the registry to keep updating. */
export async function loadCatalog(config: Config): Promise<DefinitionCatalog> {
  const [agentFiles, presetFiles] = await Promise.all([
    listAgentFiles(config.agents_dir),
    listPresetFiles(config.presets_dir),
  ]);
  const [agents, presets] = await Promise.all([
    readAll(agentFiles, readAgentFile),
    readAll(presetFiles, readPresetFile),
  ]);
  const catalog = new DefinitionCatalog(config);
  catalog.apply({ agents, presets });
  return catalog;
}
