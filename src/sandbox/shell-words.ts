import { decodeAnsiCQuoted } from "../permissions/ansi-c-quote.js";

/** Stands, inside a word, for what the shell only knows when the command runs (`$X`, `$(…)`, `*`). */
export const UNKNOWN = "\u0000";

/** One token of a command line as the shell splits it: a word, an operator, a redirection. */
export type ShellToken =
  { kind: "word"; text: string } | { kind: "operator"; text: string } | { kind: "redirection"; text: string };

const OPERATOR = ";&|()\n";
const REDIRECTION = "<>";

/**
 * Splits a command line into the words the shell would run, quotes removed, `~` and the variables
 * `known` holds expanded: what stays unknown until the command runs (another variable, a command
 * substitution, a glob) is UNKNOWN in its word. Small and synchronous (it runs when sandboxes are
 * prepared): no heredocs, no brace expansion; a word it cannot read is at worst partly UNKNOWN.
 */
export function shellWords(line: string, known: Readonly<Record<string, string>>): ShellToken[] {
  const tokens: ShellToken[] = [];
  let word: string | undefined;
  const end = () => {
    if (word !== undefined) tokens.push({ kind: "word", text: word });
    word = undefined;
  };
  const variable = (name: string) => known[name] ?? UNKNOWN;
  let index = 0;
  /** Reads `$…` at `index` (the `$` itself), returning its text. */
  const expansion = (): string => {
    const next = line[index + 1] ?? "";
    if (next === "{") {
      const close = line.indexOf("}", index + 2);
      const body = line.slice(index + 2, close === -1 ? line.length : close);
      index = close === -1 ? line.length : close + 1;
      return /^[A-Za-z_][A-Za-z0-9_]*$/.test(body) ? variable(body) : UNKNOWN;
    }
    if (next === "(") {
      index = afterParentheses(line, index + 1);
      return UNKNOWN;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(line.slice(index + 1))?.[0];
    if (name !== undefined) {
      index += 1 + name.length;
      return variable(name);
    }
    if (/^[0-9@*#?$!-]/.test(next)) {
      index += 2;
      return UNKNOWN;
    }
    index += 1;
    return "$";
  };
  while (index < line.length) {
    const character = line[index] as string;
    if (character === " " || character === "\t") {
      end();
      index += 1;
    } else if (character === "#" && word === undefined) {
      const newline = line.indexOf("\n", index);
      index = newline === -1 ? line.length : newline;
    } else if (OPERATOR.includes(character)) {
      end();
      const start = index;
      while (index < line.length && OPERATOR.includes(line[index] as string)) index += 1;
      tokens.push({ kind: "operator", text: line.slice(start, index) });
    } else if (REDIRECTION.includes(character)) {
      // `2>file`: the descriptor number is part of the redirection, not a word.
      if (word !== undefined && /^\d+$/.test(word)) word = undefined;
      else end();
      const start = index;
      while (index < line.length && "<>&".includes(line[index] as string)) index += 1;
      tokens.push({ kind: "redirection", text: line.slice(start, index) });
    } else if (character === "'") {
      const close = line.indexOf("'", index + 1);
      word = (word ?? "") + line.slice(index + 1, close === -1 ? line.length : close);
      index = close === -1 ? line.length : close + 1;
    } else if (character === '"') {
      word ??= "";
      index += 1;
      while (index < line.length && line[index] !== '"') {
        const inner = line[index] as string;
        if (inner === "\\" && '$`"\\\n'.includes(line[index + 1] ?? "")) {
          word += line[index + 1];
          index += 2;
        } else if (inner === "$") word += expansion();
        else if (inner === "`") {
          index = afterBacktick(line, index);
          word += UNKNOWN;
        } else {
          word += inner;
          index += 1;
        }
      }
      index += 1;
    } else if (character === "\\") {
      word = (word ?? "") + (line[index + 1] ?? "");
      index += 2;
    } else if (character === "$" && line[index + 1] === "'") {
      const close = line.indexOf("'", index + 2);
      const body = line.slice(index + 2, close === -1 ? line.length : close);
      word = (word ?? "") + (decodeAnsiCQuoted(body) ?? UNKNOWN);
      index = close === -1 ? line.length : close + 1;
    } else if (character === "$") {
      word = (word ?? "") + expansion();
    } else if (character === "`") {
      index = afterBacktick(line, index);
      word = (word ?? "") + UNKNOWN;
    } else if (character === "~" && word === undefined) {
      // `~` and `~/…` are $HOME; `~user/…` another account's home, not looked up.
      const user = /^[^\s/;&|()<>'"]*/.exec(line.slice(index + 1))?.[0] ?? "";
      word = user === "" ? variable("HOME") : UNKNOWN;
      index += 1 + user.length;
    } else if (character === "*" || character === "?") {
      word = (word ?? "") + UNKNOWN;
      index += 1;
    } else {
      word = (word ?? "") + character;
      index += 1;
    }
  }
  end();
  return tokens;
}

/** The index after the `)` that closes the `(` at `open`, nested ones counted. */
function afterParentheses(line: string, open: number): number {
  let depth = 0;
  for (let index = open; index < line.length; index++) {
    if (line[index] === "(") depth += 1;
    else if (line[index] === ")" && --depth === 0) return index + 1;
  }
  return line.length;
}

function afterBacktick(line: string, open: number): number {
  const close = line.indexOf("`", open + 1);
  return close === -1 ? line.length : close + 1;
}
