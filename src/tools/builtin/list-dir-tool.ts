import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { type ToolContext, type ToolOutput, defineTool } from "../tool-definition.js";
import { HeldDirectory } from "../workdir/held-directory.js";
import { type HeldWorkdir, holdWorkdir } from "../workdir/held-workdir.js";
import { openBeneath } from "../workdir/open-beneath.js";
import { SKIPPED_FOLDERS, type WalkEntry, walkWorkdir } from "../workdir/walk-workdir.js";
import { oneLinePath } from "../../util/one-line-path.js";
import { pathSubject } from "./path-subject.js";

const DEFAULT_MAX_ENTRIES = 500;

const ListDirArguments = z.strictObject({
  path: z
    .string()
    .optional()
    .describe("Folder to list, relative to the working directory (default: the working directory)."),
  recursive: z.boolean().optional().describe("true: list sub-folders too (default false)."),
  max_entries: z
    .number()
    .int()
    .positive()
    .max(10_000)
    .optional()
    .describe(`How many entries to return at most (default ${DEFAULT_MAX_ENTRIES}).`),
});

/** `list_dir`: the entries of a folder of the workdir, optionally recursive. */
export const listDirTool = defineTool({
  name: "list_dir",
  description:
    "List a folder of the working directory, one entry per line: folders end with '/', symlinks with '@'. " +
    `Recursive listings do not enter ${[...SKIPPED_FOLDERS].join(" or ")}.`,
  schema: ListDirArguments,
  subject: (value, context) => pathSubject(context, value.path ?? "."),
  run: async (value, context) => {
    const requested = value.path ?? ".";
    const workdir = holdWorkdir(context, { create: true });
    try {
      const opened = await openBeneath(workdir, requested, { kind: "read" }).catch((error: unknown) => {
        if (error instanceof AgentdError) throw error;
        throw notFolder(requested, false);
      });
      if (!opened.info.isDirectory()) {
        await opened.handle.close();
        throw notFolder(requested, true);
      }
      const folder = HeldDirectory.ofHandle(opened.handle, opened.realPath, opened.relative);
      try {
        return await listFolder(workdir, folder, value, context);
      } finally {
        await folder.release();
      }
    } finally {
      await workdir.directory.release();
    }
  },
});

async function listFolder(
  workdir: HeldWorkdir,
  folder: HeldDirectory,
  value: { recursive?: boolean | undefined; max_entries?: number | undefined },
  context: ToolContext,
): Promise<ToolOutput> {
  const maxEntries = value.max_entries ?? DEFAULT_MAX_ENTRIES;
  const budget = context.settings.max_output_bytes;
  const lines: string[] = [];
  let size = 0;
  let cut = false;
  for await (const entry of walkWorkdir(workdir, folder, {
    recursive: value.recursive === true,
    signal: context.signal,
    allowed: (relativePath) => context.pathAllowed(relativePath),
  })) {
    const line = describeEntry(entry);
    if (lines.length >= maxEntries || size + line.length > budget) {
      cut = true;
      break;
    }
    lines.push(line);
    size += line.length + 1;
  }
  if (lines.length === 0) return { ok: true, output: `${folder.relative} is empty` };
  const note = cut ? `\n[stopped after ${lines.length} entries; list a sub-folder or raise max_entries]` : "";
  return { ok: true, output: lines.join("\n") + note };
}

function notFolder(requested: string, exists: boolean): AgentdError {
  return new AgentdError("TOOL_FAILED", `"${requested}" is not a folder`, {
    hint: exists ? "use read_file for a file" : "check the name with list_dir on its parent",
  });
}

/** One entry's line: a name that could pass for more lines, or for a quoted one, is JSON-quoted. */
function describeEntry(entry: WalkEntry): string {
  const shown = oneLinePath(entry.relative);
  if (entry.kind === "directory") return `${shown}/`;
  if (entry.kind === "symlink") return `${shown}@`;
  return shown;
}
