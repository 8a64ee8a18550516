import { AgentdError, toAgentdError } from "../errors/agentd-error.js";
import { didYouMean, knownKeysAt } from "../schema/known-keys.js";
import type { LocatedYaml } from "../schema/yaml-document.js";
import { agentIdNote, agentIdOf, checkAgentId } from "./agent-id.js";
import { type AgentFrontmatter, AgentFrontmatterSchema } from "./agent-schema.js";
import type { AgentDialect } from "./foreign/foreign-translation.js";
import { translateForeignFrontmatter } from "./foreign/translate-foreign-frontmatter.js";
import { issuesToErrors } from "../schema/issues-to-errors.js";
import type { DefinitionFileContent } from "../schema/read-definition-file.js";
import { splitFrontmatter } from "./split-frontmatter.js";

/** One agent file as read and checked on its own, before presets, duplicates and config apply. */
export interface ParsedAgentFile {
  id: string;
  /** Absolute path. */
  file: string;
  /** The exact bytes read: part of the definition's content hash. */
  bytes: Buffer;
  /** The validated frontmatter; undefined when the file has errors of its own. */
  frontmatter: AgentFrontmatter | undefined;
  instructions: string;
  lineOf: LocatedYaml["lineOf"];
  errors: AgentdError[];
  warnings: string[];
  /** The tool the file was written for: Claude Code and opencode files are translated. */
  dialect: AgentDialect;
}

const FIELD_HINTS: Record<string, string> = {
  description: "add `description: <one line saying what the agent does>` to the frontmatter",
  schedule:
    'write a cron expression such as "0 9 * * 1-5" (5 fields, or 6 with seconds), or { cron, timezone, task }',
  worker: "use worker: llm or worker: cli",
  cli: "with worker: cli add `cli: { tool: claude }` (claude, gemini, codex or a name from config cli_tools)",
  limits: "limits are positive numbers; timeout takes 30s, 5m, 1h or milliseconds",
  permissions: 'permissions has allow, ask and deny lists of tool names or patterns such as "shell(git *)"',
  "schedule.timezone": "use an IANA timezone name such as Europe/Berlin or America/New_York",
  approvals: "write approvals: { timeout: 10m, on_timeout: deny }",
  secrets: "list secret names, for example secrets: [github_token]",
  tools: "list tool names, for example tools: [read_file, shell]",
};
const DEFAULT_HINT = "fix the value; docs/agent-file.md lists every field with its allowed values";

/** Reads an agent file's frontmatter and body and validates them on their own. Never throws. */
export function parseAgentFile(file: string, content: DefinitionFileContent): ParsedAgentFile {
  const parsed: ParsedAgentFile = {
    id: agentIdOf(file),
    file,
    bytes: content.bytes,
    frontmatter: undefined,
    instructions: "",
    lineOf: () => undefined,
    errors: [],
    warnings: [],
    dialect: "agentd",
  };
  const idError = checkAgentId(file);
  if (idError) parsed.errors.push(idError);
  const idNote = agentIdNote(file);
  if (idNote !== undefined) parsed.warnings.push(idNote);
  try {
    const split = splitFrontmatter(file, content.text);
    parsed.instructions = split.body;
    parsed.lineOf = split.lineOf;
    validateFrontmatter(parsed, split.data);
  } catch (error) {
    parsed.errors.push(toAgentdError(error, "DEFINITION_INVALID"));
  }
  if (parsed.errors.length > 0) parsed.frontmatter = undefined;
  return parsed;
}

/** An agent file that could not be read at all (too large, binary, not UTF-8, no permission). */
export function unreadableAgentFile(file: string, error: unknown): ParsedAgentFile {
  return {
    id: agentIdOf(file),
    file,
    bytes: Buffer.alloc(0),
    frontmatter: undefined,
    instructions: "",
    lineOf: () => undefined,
    errors: [toAgentdError(error, "DEFINITION_INVALID")],
    warnings: [],
    dialect: "agentd",
  };
}

function validateFrontmatter(parsed: ParsedAgentFile, written: unknown): void {
  if (written === null || typeof written !== "object" || Array.isArray(written)) {
    const found = Array.isArray(written) ? "a list" : `a ${written === null ? "null" : typeof written} value`;
    throw new AgentdError("DEFINITION_INVALID", `the frontmatter is ${found}, not a mapping of keys`, {
      file: parsed.file,
      line: 2,
      hint: "write one `key: value` per line, starting with `description: …`",
    });
  }
  const foreign = translateForeignFrontmatter(written as Record<string, unknown>, {
    file: parsed.file,
    body: parsed.instructions,
    locate: (key) => located(parsed, key.split(".")),
  });
  const data = foreign.data;
  parsed.dialect = foreign.dialect;
  parsed.warnings.push(...foreign.notes);
  const known = knownKeysAt(AgentFrontmatterSchema, []);
  for (const key of Object.keys(data)) {
    if (known.includes(key)) continue;
    const suggestion = didYouMean(key, known);
    parsed.warnings.push(
      `${located(parsed, [key])} ${key}: unknown key "${key}" is ignored${suggestion ? ` — did you mean "${suggestion}"?` : ""}`,
    );
  }
  const result = AgentFrontmatterSchema.safeParse(data);
  if (!result.success) {
    const source = {
      code: "DEFINITION_INVALID" as const,
      schema: AgentFrontmatterSchema,
      file: parsed.file,
      lineOf: parsed.lineOf,
      hintFor: (field: string, key: string) => FIELD_HINTS[field] ?? FIELD_HINTS[key] ?? DEFAULT_HINT,
    };
    parsed.errors.push(...issuesToErrors(source, result.error.issues));
    return;
  }
  parsed.frontmatter = result.data;
  if (parsed.instructions.trim() === "") {
    parsed.warnings.push(`${parsed.file}: the file has no instructions after the frontmatter`);
  }
  if (result.data.schedule && !result.data.schedule.task && !result.data.task) {
    const line = parsed.lineOf(["schedule"]);
    parsed.warnings.push(
      `${line === undefined ? parsed.file : `${parsed.file}:${line}`} schedule: scheduled runs have no task — add task: or schedule.task`,
    );
  }
}

/** `file:line` of a frontmatter key, or the file alone when the key has no line. */
function located(parsed: ParsedAgentFile, pathInFile: string[]): string {
  const line = parsed.lineOf(pathInFile);
  return line === undefined ? parsed.file : `${parsed.file}:${line}`;
}
