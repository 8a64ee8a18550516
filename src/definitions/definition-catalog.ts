import path from "node:path";
import type { Config } from "../config/config-schema.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { ParsedPresetFile } from "../presets/parse-preset-file.js";
import { type PresetLookup, resolvePresetChain } from "../presets/resolve-preset-chain.js";
import type { AgentDefinition } from "./agent-definition.js";
import { buildAgentDefinition } from "./build-agent-definition.js";
import { type AgentReferences, checkAgentReferences } from "./check-agent-references.js";
import { checkUnfencedSubAgents, unfencedReach } from "./check-sandbox-consent.js";
import {
  type AgentStatus,
  createSnapshot,
  type DefinitionSnapshot,
  type PresetStatus,
} from "./definition-snapshot.js";
import { MultiIndex } from "./multi-index.js";
import type { ParsedAgentFile } from "./parse-agent-file.js";

/** Files read since the last update; a file mapped to undefined no longer exists. */
export interface CatalogUpdate {
  agents?: ReadonlyMap<string, ParsedAgentFile | undefined>;
  presets?: ReadonlyMap<string, ParsedPresetFile | undefined>;
}

/**
 * Every parsed agent and preset file and what follows from them together: duplicate ids, preset
 * chains, definitions merged with the config, and the definition serving each id (kept from the
 * last valid version while a file is invalid). An update recomputes only the agents it can affect.
 */
export class DefinitionCatalog {
  private readonly agentFiles = new Map<string, ParsedAgentFile>();
  private readonly agentFilesById = new MultiIndex();
  private readonly presetFiles = new Map<string, ParsedPresetFile>();
  private readonly presetFilesByName = new MultiIndex();
  private readonly agentStatuses = new Map<string, AgentStatus>();
  /** Agent file → every preset name its chain looked up. */
  private readonly agentDependencies = new Map<string, readonly string[]>();
  private readonly presetStatuses = new Map<string, PresetStatus>();
  private readonly serving = new Map<string, AgentDefinition>();
  private readonly presetLookup: PresetLookup = {
    find: (name) => this.presetFilesByName.get(name).flatMap((file) => this.presetFiles.get(file) ?? []),
    names: () => this.presetFilesByName.keys(),
  };

  constructor(private readonly config: Config) {}

  /** Applies newly read files and returns the ids whose status or definition changed. */
  apply(update: CatalogUpdate): string[] {
    const touchedIds = new Set<string>();
    const touchedPresets = new Set<string>();
    for (const [file, parsed] of update.agents ?? []) {
      const previous = this.agentFiles.get(file);
      if (previous) touchedIds.add(previous.id);
      if (parsed) touchedIds.add(parsed.id);
    }
    for (const [file, parsed] of update.presets ?? []) {
      const previous = this.presetFiles.get(file);
      if (previous) touchedPresets.add(previous.name);
      if (parsed) touchedPresets.add(parsed.name);
    }
    // Agents with sub-agents depend on every other agent file: one appearing, going or changing its
    // own list may make a reference unknown or close a cycle.
    if ((update.agents?.size ?? 0) > 0) {
      for (const parsed of this.agentFiles.values())
        if ((parsed.frontmatter?.agents.length ?? 0) > 0) touchedIds.add(parsed.id);
      for (const parsed of update.agents?.values() ?? [])
        if (parsed && (parsed.frontmatter?.agents.length ?? 0) > 0) touchedIds.add(parsed.id);
    }
    for (const [file, names] of this.agentDependencies) {
      const id = this.agentFiles.get(file)?.id;
      if (id !== undefined && names.some((name) => touchedPresets.has(name))) touchedIds.add(id);
    }
    const before = new Map([...touchedIds].map((id) => [id, this.signature(id)]));
    for (const [file, parsed] of update.agents ?? []) this.replaceAgentFile(file, parsed);
    for (const [file, parsed] of update.presets ?? []) this.replacePresetFile(file, parsed);
    if (touchedPresets.size > 0) this.recomputePresets();
    const references = this.agentReferences();
    const unfenced = unfencedReach(this.agentFrontmatters(), this.config);
    for (const id of touchedIds) this.recomputeAgent(id, references, unfenced);
    return [...touchedIds].filter((id) => before.get(id) !== this.signature(id)).sort();
  }

  /** The bytes a file had when it was last read; undefined for a file the catalog does not hold. */
  bytesOf(file: string): Buffer | undefined {
    return (this.agentFiles.get(file) ?? this.presetFiles.get(file))?.bytes;
  }

  /** Every agent and preset file the catalog holds. */
  files(): string[] {
    return [...this.agentFiles.keys(), ...this.presetFiles.keys()];
  }

  snapshot(): DefinitionSnapshot {
    return createSnapshot(this.agentStatuses.values(), this.presetStatuses.values(), this.serving);
  }

  private replaceAgentFile(file: string, parsed: ParsedAgentFile | undefined): void {
    const previous = this.agentFiles.get(file);
    if (previous) this.agentFilesById.delete(previous.id, file);
    this.agentStatuses.delete(file);
    this.agentDependencies.delete(file);
    if (parsed) {
      this.agentFiles.set(file, parsed);
      this.agentFilesById.add(parsed.id, file);
    } else {
      this.agentFiles.delete(file);
    }
  }

  private replacePresetFile(file: string, parsed: ParsedPresetFile | undefined): void {
    const previous = this.presetFiles.get(file);
    if (previous) this.presetFilesByName.delete(previous.name, file);
    if (parsed) {
      this.presetFiles.set(file, parsed);
      this.presetFilesByName.add(parsed.name, file);
    } else {
      this.presetFiles.delete(file);
    }
  }

  private recomputePresets(): void {
    this.presetStatuses.clear();
    for (const parsed of this.presetFiles.values()) {
      const errors = [...parsed.errors];
      const twins = this.presetFilesByName.get(parsed.name).filter((file) => file !== parsed.file);
      if (twins.length > 0) {
        const names = twins.map((file) => path.basename(file)).join(", ");
        errors.push(
          new AgentdError("PRESET_INVALID", `preset name "${parsed.name}" is also used by ${names}`, {
            file: parsed.file,
            hint: "keep one file per preset name",
          }),
        );
      }
      const parent = parsed.preset?.extends;
      if (errors.length === 0 && parent !== undefined) {
        const line = parsed.extendsLine;
        const reference = { file: parsed.file, field: "extends" as const, lineOf: () => line };
        const chain = resolvePresetChain(parent, reference, this.presetLookup, [parsed.name]);
        if (chain.error) errors.push(chain.error);
      }
      this.presetStatuses.set(parsed.file, {
        name: parsed.name,
        file: parsed.file,
        valid: errors.length === 0,
        errors,
      });
    }
  }

  /** Every agent id with the `agents:` list of its (first) file. */
  private agentReferences(): AgentReferences {
    const references = new Map<string, readonly string[]>();
    for (const parsed of this.agentFiles.values())
      if (!references.has(parsed.id)) references.set(parsed.id, parsed.frontmatter?.agents ?? []);
    return references;
  }

  /** Every agent id with the frontmatter of its (first) file, undefined for a file with errors. */
  private agentFrontmatters(): Map<string, ParsedAgentFile["frontmatter"]> {
    const frontmatters = new Map<string, ParsedAgentFile["frontmatter"]>();
    for (const parsed of this.agentFiles.values())
      if (!frontmatters.has(parsed.id)) frontmatters.set(parsed.id, parsed.frontmatter);
    return frontmatters;
  }

  private recomputeAgent(id: string, references: AgentReferences, unfenced: ReadonlySet<string>): void {
    const files = this.agentFilesById.get(id);
    let valid: AgentDefinition | undefined;
    for (const file of files) {
      const parsed = this.agentFiles.get(file);
      if (!parsed) continue;
      const errors = [...parsed.errors];
      const twins = files.filter((other) => other !== file);
      if (twins.length > 0) errors.push(this.duplicateError(parsed, twins));
      if (errors.length === 0) errors.push(...checkAgentReferences(parsed, references));
      if (errors.length === 0 && parsed.frontmatter) {
        errors.push(
          ...checkUnfencedSubAgents({ ...parsed, frontmatter: parsed.frontmatter }, unfenced, this.config),
        );
      }
      const definition = errors.length === 0 ? this.define(parsed, errors) : undefined;
      if (definition) valid = definition;
      this.agentStatuses.set(file, {
        id,
        file,
        valid: definition !== undefined,
        errors,
        warnings: definition?.warnings ?? parsed.warnings,
      });
    }
    const lastValid = this.serving.get(id);
    if (valid) this.serving.set(id, valid);
    else if (!lastValid || !files.includes(lastValid.file)) this.serving.delete(id);
    const serving = this.serving.get(id);
    for (const file of files) {
      const status = this.agentStatuses.get(file);
      if (status && serving?.file === file) status.definition = serving;
    }
  }

  /** Resolves the preset chain and merges the config; pushes to `errors` when that fails. */
  private define(parsed: ParsedAgentFile, errors: AgentdError[]): AgentDefinition | undefined {
    const { frontmatter } = parsed;
    if (!frontmatter) return undefined;
    let presets: ParsedPresetFile[] = [];
    if (frontmatter.preset !== undefined) {
      const reference = {
        file: parsed.file,
        field: "preset" as const,
        lineOf: () => parsed.lineOf(["preset"]),
      };
      const chain = resolvePresetChain(frontmatter.preset, reference, this.presetLookup);
      this.agentDependencies.set(parsed.file, chain.names);
      if (chain.error) {
        errors.push(chain.error);
        return undefined;
      }
      presets = chain.presets;
    }
    const built = buildAgentDefinition({ ...parsed, frontmatter }, presets, this.config);
    if (Array.isArray(built)) {
      errors.push(...built);
      return undefined;
    }
    return built;
  }

  private duplicateError(parsed: ParsedAgentFile, twins: readonly string[]): AgentdError {
    const others = twins.map((file) => path.relative(this.config.agents_dir, file)).join(", ");
    return new AgentdError("DEFINITION_DUPLICATE_ID", `agent id "${parsed.id}" is also used by ${others}`, {
      file: parsed.file,
      hint: "every agent file needs its own name, wherever it sits under agents/; rename one of them",
      details: { others: [...twins] },
    });
  }

  /** What a user sees of an id: its files' statuses and the definition serving it. */
  private signature(id: string): string {
    const statuses = this.agentFilesById.get(id).map((file) => {
      const status = this.agentStatuses.get(file);
      return status && [file, status.valid, status.errors, status.warnings, status.definition?.hash];
    });
    return JSON.stringify([statuses, this.serving.get(id)?.hash]);
  }
}
