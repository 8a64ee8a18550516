/**
 * Characters that act on a terminal rather than show: C0 controls but the tab and the line feed
 * (ESC starts CSI and OSC sequences, CR rewrites a line, BEL ends an OSC), DEL, C1 controls (U+009B
 * is a one-character CSI) and the bidirectional overrides and isolates, which reorder what is shown.
 */
// eslint-disable-next-line no-control-regex -- the control characters are what this finds
const ACTING_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` made inert for a terminal: each acting character written as its `\uXXXX` escape, so that
 * what an agent read or wrote (a hostile page's bytes in a tool's output) is shown, never obeyed —
 * it cannot set the clipboard (OSC 52), erase or rewrite the lines above an approval prompt, or
 * reorder them.
 */
export function terminalSafeText(text: string): string {
  return text.replace(
    ACTING_CHARACTERS,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * One line of a list printed on a terminal, made inert (terminalSafeText) and kept to one line: a
 * line feed in it (a receiver's answer, an error) is written `\n`, so it cannot forge a row.
 */
export function terminalSafeLine(text: string): string {
  return terminalSafeText(text).replaceAll("\n", "\\n");
}
