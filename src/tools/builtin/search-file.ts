import { AgentdError } from "../../errors/agentd-error.js";
import type { ToolContext } from "../tool-definition.js";
import type { OpenFile } from "../workdir/open-file.js";
import type { LineMatcher } from "./line-matcher.js";
import { oneLinePath } from "../../util/one-line-path.js";
import { textLines } from "./text-lines.js";

/** Characters of a matching line shown in a result. */
const SHOWN_LINE_CHARACTERS = 300;
/** Lines longer than this are not matched (minified bundles); it also bounds a costly pattern. */
const MAX_LINE_CHARACTERS = 20_000;
/** Lines sent to the matcher at once: few round trips to its worker, bounded memory. */
const BATCH_LINES = 2_000;
const BATCH_CHARACTERS = 1_000_000;

export interface SearchState {
  results: string[];
  maxResults: number;
  /** Characters of output left; shared across files. */
  budget: { characters: number };
  signal: AbortSignal;
  /** Masks secrets in a line cut for display, including a value the cut splits (ToolContext.redactPiece). */
  redactPiece: ToolContext["redactPiece"];
}

interface NumberedLine {
  number: number;
  text: string;
}

/**
 * Adds `path:line: text` for each matching line of one open file; true once a limit is reached.
 * A matcher failure (TOOL_TIMEOUT) or an abort is thrown, with the results found so far kept.
 */
export async function searchFile(
  file: { relative: string; handle: OpenFile },
  matcher: LineMatcher,
  state: SearchState,
): Promise<boolean> {
  let batch: NumberedLine[] = [];
  let characters = 0;
  const flush = async (): Promise<boolean> => {
    const lines = batch;
    batch = [];
    characters = 0;
    if (lines.length === 0) return false;
    for (const index of await matcher.matching(lines.map((line) => line.text))) {
      if (addResult(file.relative, lines[index] as NumberedLine, state)) return true;
    }
    return false;
  };
  let number = 0;
  try {
    const lines = textLines(file.handle, { maxLineCharacters: MAX_LINE_CHARACTERS, signal: state.signal });
    for await (const { text, cut } of lines) {
      number++;
      if (cut) continue;
      batch.push({ number, text });
      characters += text.length;
      if ((batch.length >= BATCH_LINES || characters >= BATCH_CHARACTERS) && (await flush())) return true;
    }
  } catch (error) {
    if (state.signal.aborted || error instanceof AgentdError) throw error;
    // A file that vanished or cannot be read is searched as far as it was read, not fatal.
  }
  return flush();
}

/** Adds one result; true (and nothing added) when it would pass max_results or the output budget. */
function addResult(relative: string, line: NumberedLine, state: SearchState): boolean {
  // The executor's masking only knows whole values: the cut must mask the part of one it splits.
  const shown =
    line.text.length > SHOWN_LINE_CHARACTERS
      ? `${state.redactPiece(line.text.slice(0, SHOWN_LINE_CHARACTERS), "end")}…`
      : line.text;
  // A file name that could pass for more lines (or a quoted one) is JSON-quoted, and so is one
  // holding `:`, which could pass for another file's `path:line:` (`a.md:7: fake` holding a match).
  const name = relative.includes(":") ? JSON.stringify(relative) : oneLinePath(relative);
  const result = `${name}:${line.number}: ${shown}`;
  if (state.results.length >= state.maxResults || result.length > state.budget.characters) return true;
  state.results.push(result);
  state.budget.characters -= result.length + 1;
  return false;
}
