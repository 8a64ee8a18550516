/** Output cut to a byte budget, with a note saying so. */
export interface CappedOutput {
  text: string;
  truncated: boolean;
}

/**
 * Keeps the first `maxBytes` bytes of UTF-8 text (never splitting a character) and appends a note
 * with the sizes, so the model knows it saw only part and can ask for less. `totalBytes`: the size
 * of the output `text` was already cut from (the note gives it, and says the text is a part even
 * when what is left fits).
 */
export function capOutput(text: string, maxBytes: number, totalBytes?: number): CappedOutput {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes && totalBytes === undefined) return { text, truncated: false };
  let kept = bytes <= maxBytes ? text : Buffer.from(text, "utf8").subarray(0, maxBytes).toString("utf8");
  // A character cut in half decodes as U+FFFD at the end: drop it.
  if (bytes > maxBytes && kept.endsWith("\uFFFD")) kept = kept.slice(0, -1);
  const shown = Math.min(bytes, maxBytes);
  const note = `\n[output truncated: showing the first ${shown} of ${totalBytes ?? bytes} bytes; ask for a smaller part]`;
  return { text: kept + note, truncated: true };
}
