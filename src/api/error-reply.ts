import { AgentdError } from "../errors/agentd-error.js";
import type { ErrorCode } from "../errors/error-codes.js";
import { hintFor } from "../errors/error-hints.js";
import { spaceFailureOf } from "../util/storage-gate.js";
import { withClientFileNames } from "./client-file-names.js";

/** The HTTP status of each error code the API reports; any other code is a 500 INTERNAL. */
const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  BAD_REQUEST: 400,
  USAGE: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN_ROLE: 403,
  ORIGIN_NOT_ALLOWED: 403,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HOST_NOT_ALLOWED: 421,
  HEADERS_TOO_LARGE: 431,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  NOT_FOUND: 404,
  APPROVAL_NOT_FOUND: 404,
  QUESTION_NOT_FOUND: 404,
  CONFLICT: 409,
  AGENT_DISABLED: 409,
  DEFINITION_INVALID: 409,
  SHUTTING_DOWN: 503,
  STORE_UNAVAILABLE: 503,
  STORAGE_FULL: 507,
  // A state file damaged or replaced (a memory file by a folder): named, with what to do.
  STORE_CORRUPT: 500,
  NODE_UNREACHABLE: 504,
};

/** SPEC 6 error body: `{ "error": { "code", "message" } }`, plus the field and a hint when known. */
export interface ErrorBody {
  error: { code: string; message: string; field?: string; hint?: string };
}

export interface ErrorReplyOptions {
  /** data_dir: a STORE_CORRUPT's files are named relative to it. */
  dataDirectory?: string | undefined;
}

export interface ErrorReply {
  statusCode: number;
  body: ErrorBody;
  /** True when the error is the daemon's fault: log it, do not show it. */
  internal: boolean;
}

interface HttpError {
  statusCode?: number;
  message?: string;
}

/**
 * Maps anything a route threw to its status and body, in one place. AgentdErrors keep their code;
 * fastify's own client errors (bad JSON, wrong content type, body too large) become BAD_REQUEST;
 * an error met for lack of room (ENOSPC, EDQUOT, EROFS) is a 507 STORAGE_FULL; everything else is a
 * 500 INTERNAL whose details stay in the log.
 */
export function toErrorReply(error: unknown, options: ErrorReplyOptions = {}): ErrorReply {
  if (error instanceof AgentdError) {
    const statusCode = STATUS_BY_CODE[error.code];
    if (statusCode !== undefined) {
      // A damaged state file: named relative to data_dir, never by the host's path (see http-api.md).
      const shown = (text: string) =>
        error.code === "STORE_CORRUPT" ? withClientFileNames(text, options.dataDirectory, error.file) : text;
      const hint = hintFor(error);
      return {
        statusCode,
        internal: false,
        body: {
          error: {
            code: error.code,
            message: shown(error.message),
            ...(error.field === undefined ? {} : { field: error.field }),
            hint: shown(hint),
          },
        },
      };
    }
  } else {
    const statusCode = (error as HttpError | undefined)?.statusCode;
    if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
      const code =
        statusCode === 404
          ? "NOT_FOUND"
          : statusCode === 401
            ? "UNAUTHORIZED"
            : statusCode === 413
              ? "PAYLOAD_TOO_LARGE"
              : "BAD_REQUEST";
      const message = (error as HttpError).message ?? "bad request";
      return { statusCode, internal: false, body: { error: { code, message, hint: hintFor({ code }) } } };
    }
  }
  // A change that could not be written for lack of room (a token, a memory, an agent switch on a
  // full data_dir): the user's to fix, not a bug, and refused whole (the file was replaced or not).
  const space = spaceFailureOf(error);
  if (space !== undefined) {
    return {
      statusCode: 507,
      internal: false,
      body: {
        error: {
          code: "STORAGE_FULL",
          message: `the change was not made: the store has no room to write it (${space.code})`,
          hint: hintFor({ code: "STORAGE_FULL" }),
        },
      },
    };
  }
  return {
    statusCode: 500,
    internal: true,
    body: {
      error: {
        code: "INTERNAL",
        message: "internal error: the daemon log has the details",
        hint: hintFor({ code: "INTERNAL" }),
      },
    },
  };
}
