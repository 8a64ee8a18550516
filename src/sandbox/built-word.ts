/** Stands, inside a word, for what the shell only knows when the command runs (`$X`, `$(…)`, `*`). */
export const UNKNOWN = "\u0000";

/** A word of a command line being built: its text, and for each character whether bash reads it bare (unquoted). */
export interface BuiltWord {
  text: string;
  bare: boolean[];
}

/** Characters of a leading `~user`: up to the first `/`. */
const TILDE_USER = /^~[^/]*/;

/** Appends `text` to `building`, every character bare or not. */
export function append(building: BuiltWord, text: string, bare: boolean): void {
  building.text += text;
  for (let index = 0; index < text.length; index++) building.bare.push(bare);
}

/** Unquoted text: `\x` is x (quoted), a backslash-newline vanishes. */
export function bareText(text: string, building: BuiltWord): void {
  for (let index = 0; index < text.length; index++) {
    const character = text[index] as string;
    if (character !== "\\") append(building, character, true);
    else {
      const next = text[index + 1];
      index += 1;
      if (next !== undefined && next !== "\n") append(building, next, false);
    }
  }
}

/** Inside `"…"`, a backslash escapes only `$`, a backtick, `"`, `\` and a newline. */
export function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_match, escaped: string) => (escaped === "\n" ? "" : escaped));
}

/** A leading bare `~` is $HOME; `~user` another account's home, not looked up. */
export function tilde(word: BuiltWord, known: Readonly<Record<string, string>>): BuiltWord {
  if (word.text[0] !== "~" || word.bare[0] !== true) return word;
  const user = TILDE_USER.exec(word.text)?.[0] ?? "~";
  const home = user === "~" ? known["HOME"] : undefined;
  const replacement = home ?? UNKNOWN;
  return {
    text: replacement + word.text.slice(user.length),
    bare: [...Array.from(replacement, () => false), ...word.bare.slice(user.length)],
  };
}

/** A bare `*`, `?` or `[…]` matches file names when the command runs: UNKNOWN. */
export function globbed(word: BuiltWord): string {
  let text = "";
  for (let index = 0; index < word.text.length; index++) {
    const character = word.text[index] as string;
    if (word.bare[index] === true && (character === "*" || character === "?")) text += UNKNOWN;
    else if (word.bare[index] === true && character === "[") {
      const close = word.text.indexOf("]", index + 2);
      if (close === -1 || word.bare[close] !== true) text += character;
      else {
        text += UNKNOWN;
        index = close;
      }
    } else text += character;
  }
  return text;
}
