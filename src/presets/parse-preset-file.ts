import path from "node:path";
import { AgentdError, toAgentdError } from "../errors/agentd-error.js";
import { issuesToErrors } from "../schema/issues-to-errors.js";
import type { DefinitionFileContent } from "../schema/read-definition-file.js";
import { parseLocatedYaml } from "../schema/yaml-document.js";
import { type Preset, PresetSchema } from "./preset-schema.js";

/** One preset file as read and checked on its own, before its `extends` chain is resolved. */
export interface ParsedPresetFile {
  /** The file name without `.yaml`/`.yml`: what agents write in `preset:` and presets in `extends:`. */
  name: string;
  /** Absolute path. */
  file: string;
  /** The exact bytes read: part of the content hash of every agent using the preset. */
  bytes: Buffer;
  /** The validated preset; undefined when the file has errors of its own. */
  preset: Preset | undefined;
  /** Line of the `extends:` key, for errors about the parent. */
  extendsLine: number | undefined;
  errors: AgentdError[];
}

const FIELD_HINTS: Record<string, string> = {
  critical_rules: "critical_rules is a list of strings",
  success_metrics: "success_metrics is a list of strings",
  deliverable_templates: "each deliverable template is { name: …, template: | … }",
  extends: "extends names another preset file in presets/, without .yaml",
};
const DEFAULT_HINT = "fix the value; docs/presets.md has the preset format";

/** The name a preset file is known by: its base name without the extension. */
export function presetNameOf(file: string): string {
  return path.basename(file).replace(/\.ya?ml$/, "");
}

/** Parses and validates a preset file on its own. Never throws. */
export function parsePresetFile(file: string, content: DefinitionFileContent): ParsedPresetFile {
  const parsed: ParsedPresetFile = { ...emptyPreset(file), bytes: content.bytes };
  const yaml = parseLocatedYaml(content.text);
  if (yaml.syntaxError) {
    parsed.errors.push(
      new AgentdError("PRESET_INVALID", `invalid YAML: ${yaml.syntaxError.message}`, {
        file,
        line: yaml.syntaxError.line,
        hint: "fix the YAML syntax on that line",
      }),
    );
    return parsed;
  }
  const value = yaml.value ?? {};
  if (typeof value !== "object" || Array.isArray(value)) {
    parsed.errors.push(
      new AgentdError(
        "PRESET_INVALID",
        "a preset is a mapping of keys (role, description, critical_rules, …)",
        {
          file,
          line: 1,
          hint: "write one `key: value` per line, for example `role: Security Analyst`",
        },
      ),
    );
    return parsed;
  }
  const result = PresetSchema.safeParse(value);
  if (!result.success) {
    const source = {
      code: "PRESET_INVALID" as const,
      schema: PresetSchema,
      file,
      lineOf: yaml.lineOf,
      hintFor: (_field: string, key: string) => FIELD_HINTS[key] ?? DEFAULT_HINT,
    };
    parsed.errors.push(...issuesToErrors(source, result.error.issues));
    return parsed;
  }
  parsed.preset = result.data;
  parsed.extendsLine = result.data.extends === undefined ? undefined : yaml.lineOf(["extends"]);
  return parsed;
}

/** A preset file that could not be read (too large, binary, not UTF-8, no permission). */
export function unreadablePresetFile(file: string, error: unknown): ParsedPresetFile {
  return { ...emptyPreset(file), errors: [toAgentdError(error, "PRESET_INVALID")] };
}

function emptyPreset(file: string): ParsedPresetFile {
  return {
    name: presetNameOf(file),
    file,
    bytes: Buffer.alloc(0),
    preset: undefined,
    extendsLine: undefined,
    errors: [],
  };
}
