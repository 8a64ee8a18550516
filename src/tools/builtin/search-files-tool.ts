import type { OpenFile } from "../workdir/open-file.js";
import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { type ToolContext, type ToolOutput, defineTool } from "../tool-definition.js";
import { HeldDirectory } from "../workdir/held-directory.js";
import { type HeldWorkdir, holdWorkdir } from "../workdir/held-workdir.js";
import { openBeneath } from "../workdir/open-beneath.js";
import { type OpenedEntry, openWalkedFile } from "../workdir/opened-entry.js";
import { SKIPPED_FOLDERS, walkWorkdir } from "../workdir/walk-workdir.js";
import { createLineMatcher } from "./line-matcher.js";
import { looksBinary } from "./looks-binary.js";
import { nameGlob } from "./name-glob.js";
import { pathSubject } from "./path-subject.js";
import { searchFile } from "./search-file.js";

const DEFAULT_MAX_RESULTS = 100;
/** Most time a pattern may spend matching in one call (capped lower by `tools.shell_timeout`). */
const MAX_MATCHING_MILLISECONDS = 30_000;

const SearchFilesArguments = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe(
      "A JavaScript regular expression, or plain text when it is not a valid one; matched line by line.",
    ),
  path: z
    .string()
    .optional()
    .describe("Folder (or single file) to search, relative to the working directory (default: all of it)."),
  glob: z
    .string()
    .optional()
    .describe('Only files whose name matches, e.g. "*.ts", "*.{md,txt}", "src/**/*.ts".'),
  max_results: z
    .number()
    .int()
    .positive()
    .max(10_000)
    .optional()
    .describe(`How many matching lines to return at most (default ${DEFAULT_MAX_RESULTS}).`),
});

/** `search_files`: matching lines (`path:line: text`) in the text files of the workdir. */
export const searchFilesTool = defineTool({
  name: "search_files",
  description:
    "Search the text files of the working directory for a regular expression (or plain text); returns " +
    `matching lines as path:line: text. Binary files and the ${[...SKIPPED_FOLDERS].join(" and ")} folders are skipped.`,
  schema: SearchFilesArguments,
  subject: (value, context) => pathSubject(context, value.path ?? "."),
  run: async (value, context) => {
    const requested = value.path ?? ".";
    const workdir = holdWorkdir(context, { create: true });
    try {
      const opened = await openBeneath(workdir, requested, { kind: "read" }).catch((error: unknown) => {
        if (error instanceof AgentdError) throw error;
        throw new AgentdError("TOOL_FAILED", `"${value.path}" does not exist`, { cause: error });
      });
      if (opened.info.isDirectory()) {
        const folder = HeldDirectory.ofHandle(opened.handle, opened.realPath, opened.relative);
        try {
          return await search(value, context, walkedFiles(workdir, folder, context));
        } finally {
          await folder.release();
        }
      }
      try {
        if (!opened.info.isFile()) {
          throw new AgentdError("TOOL_FAILED", `"${value.path}" is neither a folder nor a regular file`);
        }
        return await search(value, context, single(opened));
      } finally {
        await opened.handle.close();
      }
    } finally {
      await workdir.directory.release();
    }
  },
});

/** An open file to search; closed by the search once searched. */
interface SearchedFile {
  relative: string;
  handle: OpenFile;
}

async function search(
  value: z.infer<typeof SearchFilesArguments>,
  context: ToolContext,
  files: AsyncIterable<SearchedFile>,
): Promise<ToolOutput> {
  const matcher = createLineMatcher(value.pattern, {
    signal: context.signal,
    budgetMilliseconds: Math.min(context.settings.shell_timeout, MAX_MATCHING_MILLISECONDS),
  });
  const wanted = value.glob === undefined ? () => true : nameGlob(value.glob);
  const maxResults = value.max_results ?? DEFAULT_MAX_RESULTS;
  const results: string[] = [];
  const budget = { characters: context.settings.max_output_bytes };
  let cut = false;
  try {
    for await (const file of files) {
      if (!wanted(file.relative) || (await looksBinary(file.handle).catch(() => true))) continue;
      cut = await searchFile(file, matcher, {
        results,
        maxResults,
        budget,
        signal: context.signal,
        redactPiece: (text, cutAt) => context.redactPiece(text, cutAt),
      });
      if (cut) break;
    }
  } catch (error) {
    if (!(error instanceof AgentdError && error.code === "TOOL_TIMEOUT")) throw error;
    const found = results.length > 0 ? `\nmatches found before it stopped:\n${results.join("\n")}` : "";
    return { ok: false, code: error.code, output: `${error.describe()}${found}` };
  } finally {
    await matcher.close();
  }
  if (results.length === 0) return { ok: true, output: `no match for ${JSON.stringify(value.pattern)}` };
  const note = cut
    ? `\n[stopped after ${results.length} matches; narrow path or glob, or raise max_results]`
    : "";
  return { ok: true, output: results.join("\n") + note };
}

/** The regular files under `folder`, each opened through the folder that lists it, closed after use. */
async function* walkedFiles(
  workdir: HeldWorkdir,
  folder: HeldDirectory,
  context: ToolContext,
): AsyncGenerator<SearchedFile> {
  for await (const entry of walkWorkdir(workdir, folder, {
    recursive: true,
    signal: context.signal,
    allowed: (relativePath) => context.pathAllowed(relativePath),
  })) {
    if (entry.kind !== "file") continue;
    const opened = await openWalkedFile(workdir, entry.folder, entry.name);
    if (opened === undefined) continue;
    try {
      yield { relative: entry.relative, handle: opened.handle };
    } finally {
      await opened.handle.close();
    }
  }
}

async function* single(opened: OpenedEntry): AsyncGenerator<SearchedFile> {
  yield { relative: opened.relative, handle: opened.handle };
}
