import { readFileSync, statSync } from "node:fs";
import { AgentdError } from "../errors/agentd-error.js";
import type { ErrorCode } from "../errors/error-codes.js";

/** Agent and preset files are prompts and settings: anything larger is a mistake, not a definition. */
export const MAX_DEFINITION_FILE_BYTES = 1_048_576;

/** A definition file's exact bytes (for the content hash) and its text. */
export interface DefinitionFileContent {
  bytes: Buffer;
  text: string;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads an agent or preset file and checks that it is plausible text: a regular file, not too
 * large, not binary, valid UTF-8. Returns undefined when the file no longer exists (deleted or
 * renamed away). Throws an AgentdError with `code` for every other problem.
 *
 * Synchronous on purpose: definition files are small and local, and reading 1,000 of them this way
 * takes a fraction of the time promise-based reads do; the size check comes first.
 */
export function readDefinitionFile(file: string, code: ErrorCode): DefinitionFileContent | undefined {
  let bytes: Buffer;
  try {
    const stats = statSync(file);
    if (!stats.isFile()) {
      throw new AgentdError(code, "not a regular file", {
        file,
        hint: "definition files are plain files; rename this entry so it does not end in .md/.yaml",
      });
    }
    if (stats.size > MAX_DEFINITION_FILE_BYTES) throw tooLarge(file, code, stats.size);
    bytes = readFileSync(file);
    // The file may have grown between stat and read.
    if (bytes.length > MAX_DEFINITION_FILE_BYTES) throw tooLarge(file, code, bytes.length);
  } catch (error) {
    if (error instanceof AgentdError) throw error;
    const errno = (error as NodeJS.ErrnoException).code;
    if (errno === "ENOENT") return undefined;
    if (errno === "ELOOP") {
      throw new AgentdError(
        code,
        "the file is a symbolic link loop: following its links comes back to itself",
        {
          file,
          hint: "point the link at a real file, or remove it",
          cause: error,
        },
      );
    }
    throw new AgentdError(code, `cannot read the file: ${(error as Error).message}`, {
      file,
      hint: "check the file's permissions",
      cause: error,
    });
  }
  return { bytes, text: decodeText(file, bytes, code) };
}

function decodeText(file: string, bytes: Buffer, code: ErrorCode): string {
  if (bytes.includes(0)) {
    throw new AgentdError(code, "the file is binary (it contains NUL bytes), not text", {
      file,
      hint: "agent and preset files are UTF-8 text; remove the file or replace it with text",
    });
  }
  try {
    return UTF8.decode(bytes).replace(/^\uFEFF/, "");
  } catch (error) {
    const offset = firstInvalidUtf8Offset(bytes);
    const line = bytes.subarray(0, offset).toString("latin1").split("\n").length;
    throw new AgentdError(code, `the file is not valid UTF-8 (first bad byte at offset ${offset})`, {
      file,
      line,
      hint: "save the file as UTF-8 (for example with `iconv -f latin1 -t utf-8`)",
      cause: error,
    });
  }
}

/** The offset of the first byte that breaks UTF-8, found by decoding growing prefixes. */
function firstInvalidUtf8Offset(bytes: Buffer): number {
  let low = 0;
  let high = bytes.length;
  // A prefix is "good" when decoding it fails only for a sequence cut at its end (stream mode).
  while (low < high) {
    const middle = Math.floor((low + high + 1) / 2);
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, middle), { stream: true });
      low = middle;
    } catch {
      high = middle - 1;
    }
  }
  return low;
}

function tooLarge(file: string, code: ErrorCode, size: number): AgentdError {
  const megabytes = (size / 1_048_576).toFixed(1);
  return new AgentdError(
    code,
    `the file is ${megabytes} MB; definition files are limited to ${MAX_DEFINITION_FILE_BYTES / 1_048_576} MB`,
    {
      file,
      hint: "keep instructions short and move reference material into files the agent reads with its tools",
    },
  );
}
