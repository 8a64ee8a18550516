import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { type ToolContext, type ToolOutput, defineTool } from "../tool-definition.js";
import { type HeldWorkdir, holdWorkdir } from "../workdir/held-workdir.js";
import { openBeneath } from "../workdir/open-beneath.js";
import type { OpenedEntry } from "../workdir/opened-entry.js";
import { startLooksBinary } from "./looks-binary.js";
import { pathSubject } from "./path-subject.js";
import { readLines } from "./read-lines.js";
import { readFileStart } from "./text-lines.js";

const DEFAULT_LINE_LIMIT = 2_000;
/** Output kept free for the closing note and a secret's mask, so the executor's cap does not cut the note. */
const NOTE_CHARACTERS = 160;

const ReadFileArguments = z.strictObject({
  path: z
    .string()
    .min(1)
    .describe("File to read, relative to the working directory (or absolute inside it)."),
  offset: z.number().int().positive().optional().describe("1-based line number to start at (default 1)."),
  limit: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(`How many lines to read at most (default ${DEFAULT_LINE_LIMIT}).`),
});

/** `read_file`: a text file of the workdir, or a part of it by lines. */
export const readFileTool = defineTool({
  name: "read_file",
  description:
    "Read a text file from the working directory. Large files come back in parts: use offset and limit " +
    "to read further. Binary files are not shown.",
  schema: ReadFileArguments,
  subject: (value, context) => pathSubject(context, value.path),
  run: async (value, context) => {
    let workdir: HeldWorkdir;
    try {
      workdir = holdWorkdir(context, { create: false });
    } catch (error) {
      throw cannotRead(value.path, error);
    }
    try {
      const opened = await openBeneath(workdir, value.path, { kind: "read" }).catch((error: unknown) => {
        throw cannotRead(value.path, error);
      });
      try {
        return await readOpened(opened, value, context);
      } finally {
        await opened.handle.close();
      }
    } finally {
      await workdir.directory.release();
    }
  },
});

async function readOpened(
  opened: OpenedEntry,
  value: { path: string; offset?: number | undefined; limit?: number | undefined },
  context: ToolContext,
): Promise<ToolOutput> {
  const { info, relative, handle } = opened;
  if (info.isDirectory()) {
    throw new AgentdError("TOOL_FAILED", `"${value.path}" is a directory`, {
      hint: "use list_dir to see it",
    });
  }
  // A FIFO or device would block the read (or never end): only regular files are read.
  if (!info.isFile()) throw notRegular(value.path);
  // One read serves both the look for binary content and the first lines.
  const start = await readFileStart(handle, info.size);
  if (startLooksBinary(start.bytes)) {
    return {
      ok: true,
      output: `"${relative}" is a binary file (${info.size} bytes); its content is not shown`,
    };
  }
  const offset = value.offset ?? 1;
  const read = await readLines(handle, {
    offset,
    limit: value.limit ?? DEFAULT_LINE_LIMIT,
    maxCharacters: textBudget(context.settings.max_output_bytes),
    signal: context.signal,
    redactPiece: (text, cutAt) => context.redactPiece(text, cutAt),
    start,
  });
  if (read.lines.length === 0 && offset > 1) {
    return { ok: true, output: `"${relative}" has fewer than ${offset} lines` };
  }
  if (read.lines.length === 0) return { ok: true, output: `"${relative}" is empty` };
  const text = read.lines.join("\n");
  if (!read.more && !read.cut) return { ok: true, output: text };
  const last = offset + read.lines.length - 1;
  const note = read.more
    ? `[showing lines ${offset}-${last}; the file continues: call read_file with offset=${last + 1}]`
    : `[showing lines ${offset}-${last}; a long line was cut]`;
  return { ok: true, output: `${text}\n${note}`, ...(read.cut ? { truncated: true } : {}) };
}

/** A failure to open, worded for the model; refusals (PATH_ESCAPE, TOOL_DENIED) pass as they are. */
function cannotRead(requested: string, error: unknown): unknown {
  if (error instanceof AgentdError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENXIO") return notRegular(requested);
  const missing = code === "ENOENT" || code === "ENOTDIR";
  return new AgentdError("TOOL_FAILED", `cannot read "${requested}": ${code ?? String(error)}`, {
    hint: missing ? "check the name with list_dir or search_files" : undefined,
    cause: error,
  });
}

function notRegular(requested: string): AgentdError {
  return new AgentdError("TOOL_FAILED", `"${requested}" is not a regular file`);
}

/** Characters of file text to read: the output cap less room for the note (half of a tiny cap). */
function textBudget(maxOutputBytes: number): number {
  return Math.max(Math.ceil(maxOutputBytes / 2), maxOutputBytes - NOTE_CHARACTERS);
}
