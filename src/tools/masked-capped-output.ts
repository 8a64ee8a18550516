import type { SecretRedactor } from "../secrets/secret-redactor.js";
import { type CappedOutput, capOutput } from "./cap-output.js";

/**
 * A tool's output as the model and the events get it: secrets masked, then cut to `maxBytes`.
 * Only the part that can be shown is masked — twice the budget and a little more, so a masked
 * value's `[secret:name]` never makes the cut show less than before — and a value cut in two at
 * its end is masked too. An MCP server's 50 MB answer so costs a scan of some 64 KB, not seconds
 * of the event loop for text nobody reads; the note still gives the whole output's size.
 */
export function maskedCappedOutput(output: string, maxBytes: number, redactor: SecretRedactor): CappedOutput {
  const shown = maxBytes * 2 + 4_096;
  if (output.length <= shown) return capOutput(redactor.redact(output), maxBytes);
  const piece = redactor.redactCutEnd(redactor.redact(output.slice(0, shown)));
  return capOutput(piece, maxBytes, Buffer.byteLength(output, "utf8"));
}
