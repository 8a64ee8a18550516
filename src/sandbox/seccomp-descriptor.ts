import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** The daemon's own descriptor of each program's file, which is already unlinked: nothing can change it. */
const held = new Map<Buffer, number>();

/**
 * A fresh read-only descriptor of `program`'s bytes, at offset 0, for one child's bubblewrap to
 * read to its end (`--seccomp FD`). Each call opens the file anew (`/proc/self/fd/N` of a
 * descriptor the daemon keeps per program, the file itself unlinked at once), so concurrent
 * spawns never share a file offset and no file is left behind. The caller closes it once the
 * child is spawned.
 */
export function openSeccompDescriptor(program: Buffer): number {
  let descriptor = held.get(program);
  if (descriptor === undefined) {
    const folder = mkdtempSync(path.join(os.tmpdir(), "agentd-seccomp-"));
    try {
      const file = path.join(folder, "filter.bpf");
      writeFileSync(file, program, { mode: 0o400 });
      descriptor = openSync(file, "r");
      held.set(program, descriptor);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }
  return openSync(`/proc/self/fd/${descriptor}`, "r");
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
