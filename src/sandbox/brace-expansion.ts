import type { BuiltWord } from "./built-word.js";

/** Words one brace expansion may make before the rest counts as unknown (`{a,b}{c,d}…`). */
const MAX_WORDS = 256;

/**
 * The words bash makes of one by brace expansion: `gates/{a,b}.sh` is `gates/a.sh gates/b.sh`,
 * nested and repeated braces too. Only bare braces and commas count (`'{a,b}'` stays one word). A
 * sequence (`{1..9}`), or all braces past MAX_WORDS words, becomes `unknown`: any text.
 */
export function expandBraces(word: BuiltWord, unknown: string): BuiltWord[] {
  const words = expand(word, unknown);
  if (words.length <= MAX_WORDS) return words;
  // Too many: what the braces span is any text.
  const first = word.text.indexOf("{");
  const last = word.text.lastIndexOf("}");
  return [
    {
      text: word.text.slice(0, first) + unknown + word.text.slice(last + 1),
      bare: [...word.bare.slice(0, first), false, ...word.bare.slice(last + 1)],
    },
  ];
}

function expand(word: BuiltWord, unknown: string): BuiltWord[] {
  for (let open = word.text.indexOf("{"); open !== -1; open = word.text.indexOf("{", open + 1)) {
    if (word.bare[open] !== true) continue;
    const found = alternatives(word, open);
    if (found === undefined) continue;
    const prefix = slice(word, 0, open);
    const suffix = slice(word, found.close + 1, word.text.length);
    if (found.parts.length === 1) {
      // `{1..9}`, `{a..z}`: a sequence, known here only as some text.
      const inner = found.parts[0] as BuiltWord;
      if (!/^[^.]*\.\.[^.]*(\.\.[^.]*)?$/.test(inner.text)) continue;
      return expand(join(join(prefix, { text: unknown, bare: [false] }), suffix), unknown);
    }
    const words: BuiltWord[] = [];
    for (const part of found.parts) {
      for (const expanded of expand(join(join(prefix, part), suffix), unknown)) {
        words.push(expanded);
        if (words.length > MAX_WORDS) return words;
      }
    }
    return words;
  }
  return [word];
}

/** The parts between the bare commas of the braces opened at `open`, or undefined if they do not close. */
function alternatives(word: BuiltWord, open: number): { parts: BuiltWord[]; close: number } | undefined {
  let depth = 0;
  let start = open + 1;
  const parts: BuiltWord[] = [];
  for (let index = open; index < word.text.length; index++) {
    if (word.bare[index] !== true) continue;
    const character = word.text[index];
    if (character === "{") depth += 1;
    else if (character === "}" && --depth === 0) {
      parts.push(slice(word, start, index));
      return index === open + 1 ? undefined : { parts, close: index };
    } else if (character === "," && depth === 1) {
      parts.push(slice(word, start, index));
      start = index + 1;
    }
  }
  return undefined;
}

function slice(word: BuiltWord, start: number, end: number): BuiltWord {
  return { text: word.text.slice(start, end), bare: word.bare.slice(start, end) };
}

function join(first: BuiltWord, second: BuiltWord): BuiltWord {
  return { text: first.text + second.text, bare: [...first.bare, ...second.bare] };
}
