import type { ErrorCode } from "./error-codes.js";

/** Where an error sits in a user's files: shown as `file:line field`. */
export interface ErrorLocation {
  file?: string;
  line?: number;
  field?: string;
}

export interface AgentdErrorOptions extends ErrorLocation {
  /** What the user should do about it, in one sentence. */
  hint?: string;
  /** Structured facts for machines (never secret values). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** The one error family of agentd: a literal code, where it happened, and what to do. */
export class AgentdError extends Error {
  override readonly name = "AgentdError";
  readonly code: ErrorCode;
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly field: string | undefined;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: AgentdErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.file = options.file;
    this.line = options.line;
    this.field = options.field;
    this.hint = options.hint;
    this.details = options.details;
  }

  /** `file:line field: message (hint)` — the form the CLI prints. */
  describe(): string {
    const where = [this.file && (this.line ? `${this.file}:${this.line}` : this.file), this.field]
      .filter(Boolean)
      .join(" ");
    const hint = this.hint ? ` — ${this.hint}` : "";
    return `${where ? `${where}: ` : ""}${this.message}${hint}`;
  }

  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      ...(this.file === undefined ? {} : { file: this.file }),
      ...(this.line === undefined ? {} : { line: this.line }),
      ...(this.field === undefined ? {} : { field: this.field }),
      ...(this.hint === undefined ? {} : { hint: this.hint }),
      ...(this.details === undefined ? {} : { details: this.details }),
    };
  }

  static is(value: unknown, code?: ErrorCode): value is AgentdError {
    return value instanceof AgentdError && (code === undefined || value.code === code);
  }
}

/** Wraps anything thrown into an AgentdError, keeping an AgentdError as it is. */
export function toAgentdError(value: unknown, code: ErrorCode = "INTERNAL"): AgentdError {
  if (value instanceof AgentdError) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new AgentdError(code, message, { cause: value });
}
