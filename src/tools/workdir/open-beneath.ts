import { constants, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import { type FileHandle, open } from "node:fs/promises";
import { AgentdError } from "../../errors/agentd-error.js";
import { requireAccess, requireCreatable } from "./file-access.js";
import { type HeldDirectory, linkTargetOf, openFolderIn } from "./held-directory.js";
import type { HeldWorkdir } from "./held-workdir.js";
import { type OpenIntent, type OpenedEntry, READ_FLAGS, checkedEntry } from "./opened-entry.js";
import { DescriptorFile, type OpenFile } from "./open-file.js";
import { componentsOf, linkComponents } from "./workdir-components.js";

/** Symlinks followed before a chain counts as a loop (the kernel's limit, ELOOP). */
const MAX_SYMLINK_HOPS = 40;
/** Opens retried when a name appears or vanishes between two steps of creating it. */
const MAX_CREATE_ATTEMPTS = 3;

type Step = { opened: OpenedEntry } | { link: string; folder: string[]; rest: string[] };

/**
 * Opens `requested` inside the held workdir, the way openat2(RESOLVE_IN_ROOT) would: each name is
 * looked up inside the folder already held (`/proc/self/fd/<fd>/<name>`), never followed when it is
 * a symlink; a symlink met is read and resolved here, from the workdir again, and refused with
 * PATH_ESCAPE when it leads outside. The opened descriptor is then checked (fstat, its real path
 * inside the workdir, the agent's sandbox) before a byte is read or written. A write never
 * truncates: the caller does, once the entry is known to be a regular file. Filesystem failures
 * (ENOENT, ENOTDIR, EISDIR, ENXIO) are thrown as they come, for the tool to word.
 */
export function openBeneath(
  workdir: HeldWorkdir,
  requested: string,
  intent: { kind: "read" },
): Promise<OpenedEntry>;
export function openBeneath(
  workdir: HeldWorkdir,
  requested: string,
  intent: { kind: "write"; append: boolean },
): Promise<OpenedEntry & { handle: FileHandle }>;
export async function openBeneath(
  workdir: HeldWorkdir,
  requested: string,
  intent: OpenIntent,
): Promise<OpenedEntry> {
  let components = componentsOf(workdir, requested);
  for (let hops = 0; ; hops++) {
    const step = await descend(workdir, components, intent, requested);
    if ("opened" in step) return step.opened;
    if (hops >= MAX_SYMLINK_HOPS) {
      throw new AgentdError("PATH_ESCAPE", `too many symlinks while resolving "${requested}"`, {
        hint: "use a path without a symlink loop",
      });
    }
    components = [...linkComponents(workdir, step.folder, step.link, requested), ...step.rest];
  }
}

/** One pass from the workdir down `components`: the entry opened, or the first symlink met. */
async function descend(
  workdir: HeldWorkdir,
  components: readonly string[],
  intent: OpenIntent,
  requested: string,
): Promise<Step> {
  const held: HeldDirectory[] = [];
  let folder = workdir.directory;
  try {
    for (let index = 0; index < components.length - 1; index++) {
      const name = components[index] as string;
      const next = openFolder(workdir, folder, name, intent);
      if ("link" in next)
        return { link: next.link, folder: components.slice(0, index), rest: components.slice(index + 1) };
      held.push(next.folder);
      folder = next.folder;
    }
    // No name at all: the workdir itself, opened again through its own descriptor.
    const name = components.at(-1) ?? ".";
    const last =
      intent.kind === "read"
        ? openForRead(folder, name)
        : await openForWrite(workdir, folder, name, intent.append);
    if ("link" in last) return { link: last.link, folder: components.slice(0, -1), rest: [] };
    return { opened: await checkedEntry(workdir, last.handle, intent, last.created, requested) };
  } finally {
    for (const directory of held) await directory.release();
  }
}

/** A folder on the way; for a write, created when missing if the sandbox lets the agent. */
function openFolder(
  workdir: HeldWorkdir,
  parent: HeldDirectory,
  name: string,
  intent: OpenIntent,
): ReturnType<typeof openFolderIn> {
  for (let attempt = 1; ; attempt++) {
    try {
      return openFolderIn(parent, name);
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
      if (!missing || intent.kind !== "write" || attempt >= MAX_CREATE_ATTEMPTS) throw error;
    }
    requireAccess(workdir.access, parent.realPath, "write", parent.relative);
    requireCreatable(workdir.access, path.join(parent.realPath, name), name);
    try {
      mkdirSync(parent.entryPath(name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
}

type LastOpening = { handle: OpenFile; created: boolean } | { link: string };

/**
 * Opens the last name for reading. The open itself is synchronous, as each folder's on the way is:
 * one system call that cannot block (O_NONBLOCK: a FIFO opens at once, and the fstat that follows
 * refuses it), where a `FileHandle` opened through libuv's threads cost several times the open;
 * the file's content is read at once when small, through libuv's threads otherwise, and its
 * descriptor closed at once (DescriptorFile).
 */
function openForRead(folder: HeldDirectory, name: string): LastOpening {
  const entry = folder.entryPath(name);
  try {
    return { handle: new DescriptorFile(openSync(entry, READ_FLAGS)), created: false };
  } catch (error) {
    const link = (error as NodeJS.ErrnoException).code === "ELOOP" ? linkTargetOf(entry) : undefined;
    if (link === undefined) throw error;
    return { link };
  }
}

/**
 * Opens an existing file for writing, or creates it (O_EXCL: never through a symlink put in its
 * place) when the sandbox lets the agent add to the folder. Non-blocking: a FIFO fails at once
 * (ENXIO) or is refused by the fstat that follows, instead of blocking until a reader comes.
 */
async function openForWrite(
  workdir: HeldWorkdir,
  folder: HeldDirectory,
  name: string,
  append: boolean,
): Promise<LastOpening> {
  const entry = folder.entryPath(name);
  const flags =
    constants.O_WRONLY |
    constants.O_NOFOLLOW |
    constants.O_NONBLOCK |
    constants.O_NOCTTY |
    (append ? constants.O_APPEND : 0);
  for (let attempt = 1; ; attempt++) {
    try {
      return { handle: await open(entry, flags), created: false };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const link = code === "ELOOP" ? linkTargetOf(entry) : undefined;
      if (link !== undefined) return { link };
      if (code !== "ENOENT" || attempt >= MAX_CREATE_ATTEMPTS) throw error;
    }
    requireAccess(workdir.access, folder.realPath, "write", folder.relative);
    requireCreatable(workdir.access, path.join(folder.realPath, name), name);
    try {
      return {
        handle: await open(entry, flags | constants.O_CREAT | constants.O_EXCL, 0o666),
        created: true,
      };
    } catch (error) {
      // Something took the name meanwhile (a dangling symlink counts): look again.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
}
