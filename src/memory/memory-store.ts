import type { MemoryKey } from "./memory-key.js";

/** A memory as stored: its whole Markdown text and its version (memoryVersion of the text). */
export interface StoredMemory {
  content: string;
  version: string;
}

/**
 * Where memories are kept. `replace` is a compare-and-set: it writes only when the memory is still at
 * `expectedVersion` and answers undefined otherwise, so no writer loses another's change.
 */
export interface MemoryStore {
  /** The memory; an absent one is empty. */
  read(key: MemoryKey): Promise<StoredMemory>;
  replace(key: MemoryKey, content: string, expectedVersion: string): Promise<StoredMemory | undefined>;
}
