import { constants } from "node:fs";
import { mkdir, open, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { defineTool } from "../tool-definition.js";
import { confinePath, ensureWorkdir } from "../workdir/confine-path.js";
import { pathSubject } from "./path-subject.js";

const WriteFileArguments = z.strictObject({
  path: z
    .string()
    .min(1)
    .describe(
      "File to write, relative to the working directory (or absolute inside it). Missing folders are created.",
    ),
  content: z.string().describe("The text to write."),
  append: z
    .boolean()
    .optional()
    .describe("true: add the content at the end of the file; false (default): replace the whole file."),
});

/** `write_file`: creates, replaces or appends to a text file of the workdir. */
export const writeFileTool = defineTool({
  name: "write_file",
  description:
    "Write a text file in the working directory: replaces its content, or appends with append=true. " +
    "Creates the file and its folders when missing.",
  schema: WriteFileArguments,
  subject: (value, context) => pathSubject(context.workdir, value.path),
  run: async (value, context) => {
    ensureWorkdir(context.workdir);
    const target = confinePath(context.workdir, value.path);
    const existing = await stat(target.absolute).catch(() => undefined);
    if (existing?.isDirectory()) {
      throw new AgentdError("TOOL_FAILED", `"${value.path}" is a directory`, {
        hint: "write to a file inside it",
      });
    }
    if (existing && !existing.isFile()) throw notRegular(value.path);
    await mkdir(path.dirname(target.absolute), { recursive: true });
    // Non-blocking open: a FIFO put in place after the check fails at once (ENXIO) or is caught
    // by the fstat below, instead of blocking the call until a reader shows up.
    const mode = value.append ? constants.O_APPEND : constants.O_TRUNC;
    const handle = await open(
      target.absolute,
      constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK | mode,
    ).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENXIO") throw notRegular(value.path);
      throw error;
    });
    try {
      if (!(await handle.stat()).isFile()) throw notRegular(value.path);
      await handle.writeFile(value.content, { encoding: "utf8", signal: context.signal });
    } finally {
      await handle.close();
    }
    const bytes = Buffer.byteLength(value.content, "utf8");
    const verb = value.append ? "appended to" : existing ? "replaced the content of" : "created";
    return { ok: true, output: `${verb} ${target.relative} (${bytes} bytes written)` };
  },
});

/** A FIFO, socket or device: writing would block or reach something other than a file. */
function notRegular(requested: string): AgentdError {
  return new AgentdError("TOOL_FAILED", `"${requested}" is not a regular file`, {
    hint: "write_file only writes regular files; choose another path",
  });
}
