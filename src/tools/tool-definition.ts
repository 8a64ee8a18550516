import { z } from "zod";
import type { Config } from "../config/config-schema.js";
import type { ErrorCode } from "../errors/error-codes.js";
import type { PermissionSubject } from "../permissions/permission-check.js";
import type { ToolRunScope } from "./tool-executor.js";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";

/** What a tool gets for one call: where it may work, when to stop, and its size and time limits. */
export interface ToolContext {
  /** The agent's absolute working directory; file tools are confined to it. */
  workdir: string;
  /** The run's signal: aborted on stop, timeout and shutdown. A tool must end promptly on it. */
  signal: AbortSignal;
  /** The agent's sandbox: every child a tool starts runs in it; `http_request` obeys its network. */
  sandbox: SandboxPolicy;
  /** Config `tools`: output cap, shell and HTTP limits. */
  settings: Config["tools"];
  /**
   * False for a path (relative to `workdir`) that a deny or ask rule of this tool names: folder
   * walks (`list_dir`, `search_files`) leave those entries out.
   */
  pathAllowed(relativePath: string): boolean;
  /**
   * For a tool that cuts its own output (the shell's beginning and end): masks known secret values
   * in a piece, including a value cut in two at the piece's `end` or `start`.
   */
  redactPiece(text: string, cutAt: "end" | "start"): string;
  /** The run the call belongs to: for tools that act on it (ask a human, start a sub-agent). */
  run?: ToolRunScope;
  /** The model's id of this call, when a model made it. */
  callId?: string;
}

/** A tool's answer before redaction and the size cap. `code` names the failure when not ok. */
export interface ToolOutput {
  ok: boolean;
  output: string;
  code?: ErrorCode;
  /** Set by a tool that already cut its own output (a shell's huge stdout). */
  truncated?: boolean;
}

/** The arguments as the tool's schema accepted them, or why they were refused (told to the model). */
export type ParsedArguments = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * One tool as the executor sees it, built-in or from an MCP server. The executor parses the
 * arguments, asks `subject` what permission rules match against, substitutes secrets into the
 * parsed value, then calls `run`.
 */
export interface ToolDefinition {
  name: string;
  /** What the model reads to decide when and how to call it. */
  description: string;
  /** JSON Schema of the arguments object, as sent to the model. */
  parameters: Record<string, unknown>;
  parse(input: unknown): ParsedArguments;
  /** What `tool(pattern)` rules match for these arguments (secret templates still in place). */
  subject(value: unknown, context: ToolContext): PermissionSubject;
  run(value: unknown, context: ToolContext): Promise<ToolOutput>;
  /**
   * True for a tool the agent's file grants by naming it (`ask_human`, an `agent__<id>` of its
   * `agents:` list): a call no permission rule names is allowed instead of asked. Deny and ask
   * rules still apply.
   */
  allowedWhenUnlisted?: boolean;
  /**
   * Puts secret values into the parsed arguments. Default: every `{{secret:name}}` in every string
   * is replaced by the value. The shell tool overrides it to pass values as environment variables,
   * so no value is ever parsed as shell syntax.
   */
  substitute?(value: unknown, secretValue: (name: string) => string): unknown;
  /**
   * Loads what `subject` and `substitute` need (the shell's parser), awaited before either is
   * called; once, on the tool's first call, so a start or a run that never calls it does not pay.
   */
  load?(): Promise<void>;
}

/** A built-in tool written against a zod schema. */
export interface TypedTool<Schema extends z.ZodType> {
  name: string;
  description: string;
  schema: Schema;
  subject(value: z.infer<Schema>, context: ToolContext): PermissionSubject;
  run(value: z.infer<Schema>, context: ToolContext): Promise<ToolOutput>;
  substitute?(value: z.infer<Schema>, secretValue: (name: string) => string): z.infer<Schema>;
  load?(): Promise<void>;
}

/**
 * Turns a zod-typed tool into a ToolDefinition: JSON Schema from zod, arguments parsed by it. The
 * JSON Schema is made when first read: every built-in tool is defined as its module loads, and a
 * run offers the model only its agent's tools (`agentd run` paid for converting them all).
 */
export function defineTool<Schema extends z.ZodType>(tool: TypedTool<Schema>): ToolDefinition {
  let parameters: Record<string, unknown> | undefined;
  return {
    name: tool.name,
    description: tool.description,
    get parameters() {
      if (parameters === undefined) {
        const converted = z.toJSONSchema(tool.schema, { io: "input" }) as Record<string, unknown>;
        delete converted["$schema"];
        parameters = converted;
      }
      return parameters;
    },
    parse: (input) => {
      const result = tool.schema.safeParse(input);
      if (result.success) return { ok: true, value: result.data };
      return { ok: false, message: describeIssues(result.error) };
    },
    subject: (value, context) => tool.subject(value as z.infer<Schema>, context),
    run: (value, context) => tool.run(value as z.infer<Schema>, context),
    ...(tool.substitute
      ? { substitute: (value, secretValue) => tool.substitute?.(value as z.infer<Schema>, secretValue) }
      : {}),
    ...(tool.load ? { load: tool.load } : {}),
  };
}

/** `path: message; …` — what the model needs to correct its call. */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "arguments"}: ${issue.message}`)
    .join("; ");
}
