/** Deeper than this, YAML in a definition or config is a mistake or an attack, never a setting. */
export const MAX_YAML_DEPTH = 64;
/** Aliases (`*name`) expanded per document at most: a "billion laughs" file stops here. */
export const MAX_YAML_ALIASES = 100;

/** Where a text nests deeper than allowed. */
export interface NestingProblem {
  depth: number;
  /** 1-based line where the limit was passed. */
  line: number;
}

/**
 * A cheap scan run before parsing, so that no parser ever walks a hundred thousand levels: flow
 * brackets (`[`, `{`) outside quotes and comments, plus block nesting (indentation levels and
 * compact `- - -` / `? ` entries on one line). Approximate by design: it may count a bracket in a
 * plain scalar, which only matters for text nesting 64 levels of brackets anyway.
 */
export function findExcessiveNesting(text: string, maxDepth = MAX_YAML_DEPTH): NestingProblem | undefined {
  let flowDepth = 0;
  let line = 1;
  let quote: '"' | "'" | undefined;
  let lineStart = true;
  let indent = 0;
  const indents: number[] = [];
  /** The last character that was not a space: a quote opens a scalar only where a value starts. */
  let previous = "";
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index] ?? "";
    if (character === "\n") {
      line += 1;
      lineStart = true;
      indent = 0;
      continue;
    }
    if (quote) {
      lineStart = false;
      if (character === "\\" && quote === '"') index += 1;
      else if (character === quote) quote = undefined;
      continue;
    }
    if (lineStart) {
      if (character === " ") {
        indent += 1;
        continue;
      }
      lineStart = false;
      previous = "";
      if (character === "#") {
        index = skipToLineEnd(text, index);
        continue;
      }
      if (flowDepth === 0) {
        while (indents.length > 0 && (indents.at(-1) ?? 0) >= indent) indents.pop();
        indents.push(indent);
        let compact = 0;
        // `- - - x` or `? ? x`: each marker opens one more level on the same line.
        while ((text[index] === "-" || text[index] === "?") && text[index + 1] === " ") {
          compact += 1;
          index += 2;
          while (text[index] === " ") index += 1;
        }
        if (indents.length + compact > maxDepth) return { depth: indents.length + compact, line };
        previous = compact > 0 ? "-" : "";
        index -= 1;
        continue;
      }
    }
    if (character !== " " && character !== "\t") {
      const opensValue = previous === "" || ":-[{,?".includes(previous);
      previous = character;
      if ((character === '"' || character === "'") && opensValue) {
        quote = character;
        continue;
      }
    }
    if (character === '"' || character === "'") continue;
    else if (character === "#" && (text[index - 1] === " " || text[index - 1] === "\t"))
      index = skipToLineEnd(text, index);
    else if (character === "[" || character === "{") {
      flowDepth += 1;
      if (flowDepth + indents.length > maxDepth) return { depth: flowDepth + indents.length, line };
    } else if ((character === "]" || character === "}") && flowDepth > 0) flowDepth -= 1;
  }
  return undefined;
}

function skipToLineEnd(text: string, index: number): number {
  const end = text.indexOf("\n", index);
  return (end === -1 ? text.length : end) - 1;
}

/**
 * Entries (keys and list items) a YAML text may hold at most. Parsing is linear but not cheap
 * (about 60 µs an entry on a loaded 2-core machine), and runs on the event loop: a definition
 * never needs this many, and a file that has them would hold every run and request for seconds.
 */
export const MAX_YAML_ENTRIES = 10_000;

/**
 * The 1-based line where a text passes `maxEntries` entries, or undefined. Counted before parsing,
 * as an upper bound: every line with a `:` or a leading `-`, and every `,` (flow collections).
 */
export function findExcessiveEntries(text: string, maxEntries = MAX_YAML_ENTRIES): number | undefined {
  let entries = 0;
  let line = 1;
  let lineHasEntry = false;
  let lineStart = true;
  for (let index = 0; index < text.length; index += 1) {
    const character = text.charCodeAt(index);
    if (character === 10) {
      if (lineHasEntry) entries += 1;
      if (entries > maxEntries) return line;
      line += 1;
      lineHasEntry = false;
      lineStart = true;
      continue;
    }
    if (character === 44) entries += 1;
    else if (character === 58) lineHasEntry = true;
    else if (lineStart && character === 45) lineHasEntry = true;
    if (character !== 32 && character !== 9) lineStart = false;
  }
  if (lineHasEntry) entries += 1;
  return entries > maxEntries ? line : undefined;
}
