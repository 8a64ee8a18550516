/**
 * Characters a browser does not show as themselves: C0 and C1 controls but the tab and the line
 * feed, the bidirectional marks, embeddings, overrides and isolates (which reorder the text around
 * them: a command shown other than it runs), and zero-width and other invisible characters.
 */
const HIDDEN_CHARACTERS =
  // eslint-disable-next-line no-control-regex -- the control characters are what this finds
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/**
 * `text` with each hidden character written as its `\uXXXX` escape, so that what a model wrote
 * (a tool call's arguments, shown beside the button that approves them) reads as it is.
 */
export function visibleText(text: string): string {
  return text.replace(
    HIDDEN_CHARACTERS,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
