/**
 * A path as one line of a list a model reads: as it is, or JSON-quoted when it holds a control
 * character (a newline, CR, ESC, C1, U+2028/9) or starts with `"`, so that a file name cannot add a
 * line of its own to the list (`a\nagents/evil.md` passing for two entries) or pass for a quoted one.
 */
export function oneLinePath(relative: string): string {
  const unsafe =
    relative.startsWith('"') ||
    [...relative].some((character) => {
      const code = character.codePointAt(0) ?? 0;
      return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;
    });
  return unsafe ? JSON.stringify(relative) : relative;
}
