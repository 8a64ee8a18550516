import type { WalkEntry } from "../workdir/walk-workdir.js";
import { textLines } from "./text-lines.js";

/** Characters of a matching line shown in a result. */
const SHOWN_LINE_CHARACTERS = 300;
/** Lines longer than this are not matched (minified bundles); it also bounds a costly pattern. */
const MAX_LINE_CHARACTERS = 20_000;

export interface SearchState {
  results: string[];
  maxResults: number;
  /** Characters of output left; shared across files. */
  budget: { characters: number };
  signal: AbortSignal;
}

/** Adds `path:line: text` for each matching line of one file; true once a limit is reached. */
export async function searchFile(
  file: Pick<WalkEntry, "absolute" | "relative">,
  matches: (line: string) => boolean,
  state: SearchState,
): Promise<boolean> {
  let number = 0;
  try {
    const lines = textLines(file.absolute, { maxLineCharacters: MAX_LINE_CHARACTERS, signal: state.signal });
    for await (const { text, cut } of lines) {
      number++;
      if (cut || !matches(text)) continue;
      const shown = text.length > SHOWN_LINE_CHARACTERS ? `${text.slice(0, SHOWN_LINE_CHARACTERS)}…` : text;
      const result = `${file.relative}:${number}: ${shown}`;
      if (state.results.length >= state.maxResults || result.length > state.budget.characters) return true;
      state.results.push(result);
      state.budget.characters -= result.length + 1;
    }
    return false;
  } catch (error) {
    if (state.signal.aborted) throw error;
    // A file that vanished or cannot be read is left out, not fatal to the search.
    return false;
  }
}
