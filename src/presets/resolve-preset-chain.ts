import path from "node:path";
import { AgentdError } from "../errors/agentd-error.js";
import { didYouMean } from "../schema/known-keys.js";
import type { ParsedPresetFile } from "./parse-preset-file.js";

/** Where a preset name was written: an agent's `preset:` or a preset's `extends:`. */
export interface PresetReference {
  file: string;
  field: "preset" | "extends";
  /** The line, looked up only when an error needs it. */
  lineOf: () => number | undefined;
}

/** The presets known by name, as the catalog holds them. */
export interface PresetLookup {
  /** Every file with that name (more than one is an error). */
  find(name: string): readonly ParsedPresetFile[];
  names(): Iterable<string>;
}

/** A resolved `preset:`/`extends:` chain, or the first reason it cannot be used. */
export interface PresetChain {
  /** The named preset first, then its parent, up to the root. */
  presets: ParsedPresetFile[];
  /** Every name looked up, the failing one included: a change to any of them can change the outcome. */
  names: string[];
  error: AgentdError | undefined;
}

/**
 * Follows `extends` from `name`. Fails with PRESET_NOT_FOUND (pointing where the missing name was
 * written), PRESET_INVALID (pointing into the bad preset file) or PRESET_CYCLE (naming the cycle).
 * `visited` holds names already on the chain, such as the preset that is being checked itself.
 */
export function resolvePresetChain(
  name: string,
  from: PresetReference,
  lookup: PresetLookup,
  visited: readonly string[] = [],
): PresetChain {
  const chain: PresetChain = { presets: [], names: [...visited], error: undefined };
  let current: string | undefined = name;
  let reference = from;
  while (current !== undefined) {
    const cycleStart = chain.names.indexOf(current);
    chain.names.push(current);
    if (cycleStart !== -1) {
      chain.error = cycleError(chain.names.slice(cycleStart), reference);
      return chain;
    }
    const files = lookup.find(current);
    const [preset] = files;
    if (!preset) {
      chain.error = notFoundError(current, reference, lookup);
      return chain;
    }
    if (files.length > 1) {
      const names = files.map((file) => path.basename(file.file)).join(" and ");
      chain.error = new AgentdError("PRESET_INVALID", `preset "${current}" is defined twice: ${names}`, {
        file: preset.file,
        hint: "keep one of the files",
      });
      return chain;
    }
    const [firstError] = preset.errors;
    if (firstError || !preset.preset) {
      chain.error = invalidError(current, preset, firstError);
      return chain;
    }
    chain.presets.push(preset);
    current = preset.preset.extends;
    const extendsLine = preset.extendsLine;
    reference = { file: preset.file, field: "extends", lineOf: () => extendsLine };
  }
  return chain;
}

function cycleError(cycle: string[], reference: PresetReference): AgentdError {
  const line = reference.lineOf();
  return new AgentdError("PRESET_CYCLE", `preset cycle: ${cycle.join(" → ")}`, {
    file: reference.file,
    field: reference.field,
    ...(line === undefined ? {} : { line }),
    hint: "remove one `extends:` so the chain ends at a preset without a parent",
    details: { cycle },
  });
}

function notFoundError(name: string, reference: PresetReference, lookup: PresetLookup): AgentdError {
  const line = reference.lineOf();
  const suggestion = didYouMean(name, [...lookup.names()]);
  return new AgentdError("PRESET_NOT_FOUND", `preset "${name}" does not exist`, {
    file: reference.file,
    field: reference.field,
    ...(line === undefined ? {} : { line }),
    hint: suggestion
      ? `did you mean "${suggestion}"? Otherwise create presets/${name}.yaml`
      : `create presets/${name}.yaml or fix the name`,
    details: { preset: name },
  });
}

function invalidError(name: string, preset: ParsedPresetFile, cause: AgentdError | undefined): AgentdError {
  return new AgentdError(
    "PRESET_INVALID",
    `preset "${name}" is invalid${cause ? `: ${cause.message}` : ""}`,
    {
      file: preset.file,
      ...(cause?.line === undefined ? {} : { line: cause.line }),
      ...(cause?.field === undefined ? {} : { field: cause.field }),
      hint: cause?.hint ?? "fix the preset file",
      details: { preset: name },
      cause,
    },
  );
}
