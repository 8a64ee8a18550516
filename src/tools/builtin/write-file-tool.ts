import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { defineTool } from "../tool-definition.js";
import { holdWorkdir } from "../workdir/held-workdir.js";
import { openBeneath } from "../workdir/open-beneath.js";
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
  subject: (value, context) => pathSubject(context, value.path),
  run: async (value, context) => {
    const workdir = holdWorkdir(context, { create: true });
    try {
      const opened = await openBeneath(workdir, value.path, {
        kind: "write",
        append: value.append === true,
      }).catch((error: unknown) => {
        throw cannotWrite(value.path, error);
      });
      try {
        if (!opened.info.isFile()) throw notRegular(value.path);
        // Truncated only now: the descriptor is known to be a regular file inside the workdir.
        if (value.append !== true) await opened.handle.truncate(0);
        await opened.handle.writeFile(value.content, { encoding: "utf8", signal: context.signal });
      } finally {
        await opened.handle.close();
      }
      const bytes = Buffer.byteLength(value.content, "utf8");
      const verb = value.append ? "appended to" : opened.created ? "created" : "replaced the content of";
      return { ok: true, output: `${verb} ${opened.relative} (${bytes} bytes written)` };
    } finally {
      await workdir.directory.release();
    }
  },
});

/** A failure to open, worded for the model; refusals (PATH_ESCAPE, TOOL_DENIED) pass as they are. */
function cannotWrite(requested: string, error: unknown): unknown {
  if (error instanceof AgentdError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EISDIR") {
    return new AgentdError("TOOL_FAILED", `"${requested}" is a directory`, {
      hint: "write to a file inside it",
    });
  }
  if (code === "ENXIO") return notRegular(requested);
  if (code === "ENOTDIR") {
    return new AgentdError("TOOL_FAILED", `cannot write "${requested}": a folder on the way is a file`, {
      cause: error,
    });
  }
  return error;
}

/** A FIFO, socket or device: writing would block or reach something other than a file. */
function notRegular(requested: string): AgentdError {
  return new AgentdError("TOOL_FAILED", `"${requested}" is not a regular file`, {
    hint: "write_file only writes regular files; choose another path",
  });
}
