import { stat } from "node:fs/promises";
import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { defineTool } from "../tool-definition.js";
import { confinePath, ensureWorkdir } from "../workdir/confine-path.js";
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
  subject: (value, context) => pathSubject(context.workdir, value.path ?? "."),
  run: async (value, context) => {
    ensureWorkdir(context.workdir);
    const target = confinePath(context.workdir, value.path ?? ".");
    const info = await stat(target.absolute).catch(() => undefined);
    if (!info) throw new AgentdError("TOOL_FAILED", `"${value.path}" does not exist`);
    if (!info.isDirectory() && !info.isFile()) {
      throw new AgentdError("TOOL_FAILED", `"${value.path}" is neither a folder nor a regular file`);
    }
    const matcher = createLineMatcher(value.pattern, {
      signal: context.signal,
      budgetMilliseconds: Math.min(context.settings.shell_timeout, MAX_MATCHING_MILLISECONDS),
    });
    const wanted = value.glob === undefined ? () => true : nameGlob(value.glob);
    const maxResults = value.max_results ?? DEFAULT_MAX_RESULTS;
    const results: string[] = [];
    const budget = { characters: context.settings.max_output_bytes };
    const files = info.isDirectory()
      ? walkWorkdir(target.absolute, {
          root: target.root,
          recursive: true,
          signal: context.signal,
          allowed: (relativePath) => context.pathAllowed(relativePath),
        })
      : single(target.absolute, target.relative);
    let cut = false;
    try {
      for await (const file of files) {
        if (file.kind !== "file" || !wanted(file.relative)) continue;
        if (await looksBinary(file.absolute).catch(() => true)) continue;
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
  },
});

async function* single(absolute: string, relative: string) {
  yield { absolute, relative, kind: "file" as const };
}
