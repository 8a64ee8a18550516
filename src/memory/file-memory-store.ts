import path from "node:path";
import { AgentdError } from "../errors/agentd-error.js";
import { errnoCodeOf } from "../util/errno-code.js";
import { replaceFile } from "../util/replace-file.js";
import { storeWriteFailed } from "../util/whole-append.js";
import type { MemoryKey } from "./memory-key.js";
import type { MemoryStore, StoredMemory } from "./memory-store.js";
import { memoryVersion } from "./memory-version.js";
import { readRegularFile } from "../util/read-regular-file.js";

/**
 * The folder of every memory file: `<data_dir>/memory`. data_dir is hidden from every sandbox (it
 * holds the vault), so no sandboxed child can read or write a memory file, wherever its workdir is.
 */
export function memoryFolder(dataDirectory: string): string {
  return path.join(dataDirectory, "memory");
}

/** `<data_dir>/memory/agents/<id>.md` or `<data_dir>/memory/shared/<scope>.md`. */
export function memoryFile(dataDirectory: string, key: MemoryKey): string {
  const folder = memoryFolder(dataDirectory);
  return key.kind === "agent"
    ? path.join(folder, "agents", `${key.agent}.md`)
    : path.join(folder, "shared", `${key.scope}.md`);
}

/**
 * Memories as Markdown files an operator can read and edit by hand (the next run reads the edit).
 * A write replaces the whole file (temp file, fsync, rename): a crash leaves the old or the new
 * text. The compare-and-set reads the file again just before writing; callers serialize writes of
 * one memory (MemoryService), and one daemon owns data_dir, so only a hand edit in the moment
 * between that read and the rename could be overwritten.
 */
export class FileMemoryStore implements MemoryStore {
  readonly #dataDirectory: string;

  constructor(dataDirectory: string) {
    this.#dataDirectory = dataDirectory;
  }

  async read(key: MemoryKey): Promise<StoredMemory> {
    let content = "";
    const file = memoryFile(this.#dataDirectory, key);
    try {
      content = await readRegularFile(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT")
        return { content, version: memoryVersion(content) };
      // A folder, a FIFO or a file of another user in its place: the operator's to fix, not a bug.
      const name = path.relative(this.#dataDirectory, file);
      throw new AgentdError(
        "STORE_CORRUPT",
        `the memory file ${name} cannot be read (${errnoCodeOf(error) ?? "error"})`,
        {
          file: name,
          hint: "move aside what is in its place in data_dir (a memory is one Markdown file) and try again",
          cause: error,
        },
      );
    }
    return { content, version: memoryVersion(content) };
  }

  async replace(key: MemoryKey, content: string, expectedVersion: string): Promise<StoredMemory | undefined> {
    const current = await this.read(key);
    if (current.version !== expectedVersion) return undefined;
    const file = memoryFile(this.#dataDirectory, key);
    // Named, so that a full disk's reason says which file could not be written.
    await replaceFile(file, content).catch((error: unknown) => {
      const name = path.relative(this.#dataDirectory, file);
      throw storeWriteFailed(file, error, `could not write the memory file ${name}`);
    });
    return { content, version: memoryVersion(content) };
  }
}
