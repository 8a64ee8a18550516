import type { OpenFile } from "../workdir/open-file.js";

/** Bytes sniffed at the start of a file to tell text from binary. */
const SNIFF_BYTES = 8_192;

/**
 * Whether an open file looks binary (read from its start, whatever its position): a NUL byte in its first 8 KiB, as git and grep decide. Text in
 * UTF-16 counts as binary too; models rarely need it and its bytes are unreadable as UTF-8.
 */
export async function looksBinary(file: OpenFile): Promise<boolean> {
  const buffer = Buffer.alloc(SNIFF_BYTES);
  const { bytesRead } = await file.read(buffer, 0, SNIFF_BYTES, 0);
  return buffer.subarray(0, bytesRead).includes(0);
}

/** The same test on a file's first bytes read already (at least SNIFF_BYTES of them, or the whole file). */
export function startLooksBinary(start: Buffer): boolean {
  return start.subarray(0, SNIFF_BYTES).includes(0);
}
