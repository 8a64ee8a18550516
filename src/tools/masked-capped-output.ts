import type { SecretRedactor } from "../secrets/secret-redactor.js";
import { type CappedOutput, capOutput } from "./cap-output.js";

/**
 * A tool's output as the model and the events get it: secrets masked, then cut to `maxBytes`.
 * Only the part that can be shown is masked — twice the budget and a little more — and a value cut
 * in two at its end is masked too. An MCP server's 50 MB answer so costs a scan of some 64 KB, not
 * seconds of the event loop for text nobody reads; the note still gives the whole output's size.
 *
 * The end of the masked part stays out of sight: the masks of a long value repeated shrink the
 * part, and a value cut in two there is left as it is in an encoded form (its bytes listed, spaced
 * hex) that no cut check knows. While what is shown would come within `maxBytes` and 4 KiB of that
 * end (as it never does without masks), the part read is doubled — up to the whole output.
 */
export function maskedCappedOutput(output: string, maxBytes: number, redactor: SecretRedactor): CappedOutput {
  const hidden = maxBytes + 4_096;
  for (let end = maxBytes + hidden; ; end *= 2) {
    if (output.length <= end) return capOutput(redactor.redact(output), maxBytes);
    const masked = redactor.redact(output.slice(0, end));
    if (
      masked.length > hidden &&
      Buffer.byteLength(masked.slice(0, masked.length - hidden), "utf8") >= maxBytes
    )
      return capOutput(redactor.redactCutEnd(masked), maxBytes, Buffer.byteLength(output, "utf8"));
  }
}
