import { createHash } from "node:crypto";

/**
 * A memory's version: derived from its content (sha256, 16 hex digits), so a hand edit of the file
 * changes it too, every node of a cluster computes the same one, and an empty memory has one.
 */
export function memoryVersion(content: string): string {
  return createHash("sha256").update(content, "utf8").digest("hex").slice(0, 16);
}
