/** Output cut to a byte budget, with a note saying so. */
export interface CappedOutput {
  text: string;
  truncated: boolean;
}

/**
 * Keeps the first `maxBytes` bytes of UTF-8 text (never splitting a character) and appends a note
 * with the sizes, so the model knows it saw only part and can ask for less.
 */
export function capOutput(text: string, maxBytes: number): CappedOutput {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return { text, truncated: false };
  let kept = Buffer.from(text, "utf8").subarray(0, maxBytes).toString("utf8");
  // A character cut in half decodes as U+FFFD at the end: drop it.
  if (kept.endsWith("\uFFFD")) kept = kept.slice(0, -1);
  const note = `\n[output truncated: showing the first ${maxBytes} of ${bytes} bytes; ask for a smaller part]`;
  return { text: kept + note, truncated: true };
}
