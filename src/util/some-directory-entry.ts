import { opendirSync } from "node:fs";

/**
 * Whether a folder holds an entry whose name passes `test`, reading its entries one at a time and
 * stopping at the first that does: a folder of hundreds of thousands of run files costs one read,
 * not an array of every name. False for a folder that is missing or cannot be read.
 */
export function someDirectoryEntry(directory: string, test: (name: string) => boolean = () => true): boolean {
  let folder;
  try {
    folder = opendirSync(directory);
  } catch {
    return false;
  }
  try {
    for (let entry = folder.readSync(); entry !== null; entry = folder.readSync()) {
      if (test(entry.name)) return true;
    }
    return false;
  } finally {
    folder.closeSync();
  }
}
