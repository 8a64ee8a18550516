import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** The daemon's own descriptor of the filter file, which is already unlinked: nothing can change it. */
let held: number | undefined;

/**
 * A fresh read-only descriptor of `program`'s bytes, at offset 0, for one child's bubblewrap to
 * read to its end (`--seccomp FD`). Each call opens the file anew (`/proc/self/fd/N` of a
 * descriptor the daemon keeps, the file itself unlinked at once), so concurrent spawns never share
 * a file offset and no file is left behind. The caller closes it once the child is spawned.
 */
export function openSeccompDescriptor(program: Buffer): number {
  if (held === undefined) {
    const folder = mkdtempSync(path.join(os.tmpdir(), "agentd-seccomp-"));
    try {
      const file = path.join(folder, "filter.bpf");
      writeFileSync(file, program, { mode: 0o400 });
      held = openSync(file, "r");
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }
  return openSync(`/proc/self/fd/${held}`, "r");
}

/** Closes a descriptor once; later calls do nothing. */
export function closeOnce(descriptor: number | undefined): () => void {
  let open = descriptor !== undefined;
  return () => {
    if (!open) return;
    open = false;
    try {
      closeSync(descriptor as number);
    } catch {
      // Closed already: nothing to release.
    }
  };
}
