import { isAlias, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, visit } from "yaml";
import { findDuplicateKey } from "./duplicate-yaml-key.js";
import {
  MAX_YAML_ALIASES,
  MAX_YAML_DEPTH,
  MAX_YAML_ENTRIES,
  findExcessiveEntries,
  findExcessiveNesting,
} from "./yaml-limits.js";

/** A parsed YAML document that can say on which line a value sits. */
export interface LocatedYaml {
  value: unknown;
  /** 1-based line of the node at `path`, or of the closest parent that exists. */
  lineOf(path: ReadonlyArray<PropertyKey>): number | undefined;
  /** The first syntax error, with its line, when the text is not valid YAML. */
  syntaxError: { message: string; line: number } | undefined;
}

/**
 * Parses YAML keeping positions. `lineOffset` shifts line numbers, for YAML embedded in a file
 * (frontmatter starts on line 2). Text nesting deeper than MAX_YAML_DEPTH is refused before any
 * parsing, and alias expansion stops at MAX_YAML_ALIASES: both come back as a syntax error with
 * the line, so no file can hold the event loop or fill memory.
 */
export function parseLocatedYaml(text: string, lineOffset = 0): LocatedYaml {
  const nesting = findExcessiveNesting(text);
  if (nesting) {
    return {
      value: undefined,
      lineOf: () => undefined,
      syntaxError: {
        message: `the YAML nests more than ${MAX_YAML_DEPTH} levels deep`,
        line: nesting.line + lineOffset,
      },
    };
  }
  const crowded = findExcessiveEntries(text);
  if (crowded !== undefined) {
    return {
      value: undefined,
      lineOf: () => undefined,
      syntaxError: {
        message: `the YAML holds more than ${MAX_YAML_ENTRIES} entries (keys and list items); split it or trim it`,
        line: crowded + lineOffset,
      },
    };
  }
  const lineCounter = new LineCounter();
  // Unique keys are checked below in one pass: the library's check is quadratic in the key count.
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  const lineAt = (offset: number) => lineCounter.linePos(offset).line + lineOffset;
  const firstError = document.errors[0];
  let syntaxError = firstError
    ? {
        message: firstError.message.split("\n")[0] ?? firstError.message,
        line: lineAt(firstError.pos[0]),
      }
    : undefined;
  const duplicate = syntaxError === undefined ? findDuplicateKey(document) : undefined;
  if (duplicate !== undefined) syntaxError = { message: "Map keys must be unique", line: lineAt(duplicate) };
  let value: unknown;
  if (!syntaxError) {
    try {
      value = document.toJS({ maxAliasCount: MAX_YAML_ALIASES });
    } catch (error) {
      // yaml throws a ReferenceError when aliases expand past the limit (a "billion laughs" file).
      syntaxError = {
        message: `aliases expand past ${MAX_YAML_ALIASES} (${error instanceof Error ? error.message : String(error)})`,
        line: lineAt(firstAliasOffset(document)),
      };
    }
  }
  return {
    value,
    syntaxError,
    lineOf(path) {
      let node: unknown = document.contents;
      let line = rangeLine(node as Node | null);
      for (const segment of path) {
        let next: unknown;
        if (isMap(node)) {
          const pair = node.items.find(
            (item) => isScalar(item.key) && String(item.key.value) === String(segment),
          );
          if (!pair) break;
          next = pair.value ?? pair.key;
          const keyLine = rangeLine(pair.key as Node);
          if (keyLine !== undefined) line = keyLine;
        } else if (isSeq(node) && typeof segment === "number") {
          next = node.items[segment];
        } else break;
        // A block map or list under a key starts on the next line: the key's line is the one to show.
        const underKey = isMap(node);
        node = next;
        if (!(underKey && (isMap(node) || isSeq(node)))) line = rangeLine(node as Node | null) ?? line;
      }
      return line === undefined ? undefined : line + lineOffset;
    },
  };

  function firstAliasOffset(parsed: ReturnType<typeof parseDocument>): number {
    let offset = 0;
    visit(parsed, {
      Alias(_key, node) {
        if (!isAlias(node)) return undefined;
        offset = node.range?.[0] ?? 0;
        return visit.BREAK;
      },
    });
    return offset;
  }

  function rangeLine(node: Node | null | undefined): number | undefined {
    const start = node?.range?.[0];
    return start === undefined ? undefined : lineCounter.linePos(start).line;
  }
}
