import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import { isWithin } from "../util/path-within.js";
import type { SandboxPolicy } from "./sandbox-policy.js";

/** What a sandboxed process sees of a path. */
export type MountAccess = "hidden" | "read-only" | "writable";

/**
 * One layer of the sandbox's filesystem: `path` (a real, existing path) shown as `access`. Layers
 * apply in order, as bubblewrap's mounts do: what a path looks like is the access of the last
 * layer that holds it.
 */
export interface SandboxMount {
  path: string;
  access: MountAccess;
  /** A hidden folder is an empty tmpfs; a hidden file is /dev/null; `private` is a fresh tmpfs (/tmp). */
  private?: boolean;
}

/** Extra binds one child needs beyond its policy: the network bridge's files, node for the bridge. */
export interface ExtraBinds {
  read: string[];
  /** Bound read-write: a unix socket must be connectable. */
  write: string[];
}

const NO_EXTRA: ExtraBinds = { read: [], write: [] };

/**
 * The layers of a policy's filesystem, in order: the whole filesystem read-only, a private /tmp,
 * the hidden paths, then what is made visible again (extra reads, the workdir, extra writes), then
 * the always-hidden paths (data_dir, the vault) hidden once more so no bind reveals them, then the
 * protected paths (definitions) read-only over everything, and their hidden ones (config, .env)
 * hidden. Paths that do not exist are left out; every path is real (symlinks resolved).
 * `resolved`: the paths' real paths found already (existingRealPath), by path. `protectedPaths`
 * and `systemRead`: the policy's own unless given (the file tools' read check leaves both out:
 * readLayersOf).
 */
export function sandboxMounts(
  policy: SandboxPolicy,
  extra: ExtraBinds = NO_EXTRA,
  resolved = new Map<string, string | undefined>(),
  protectedPaths: readonly string[] = policy.protected,
  systemRead: readonly string[] = policy.systemRead ?? [],
): SandboxMount[] {
  // A path met twice (the socket places are hidden, then hidden again) is resolved once.
  const workdir = existingRealPath(policy.workdir, resolved) ?? policy.workdir;
  const real = (entries: readonly string[]) =>
    entries.flatMap((entry) => existingRealPath(entry, resolved) ?? []);
  const read = real([...policy.read, ...systemRead, ...extra.read]);
  const write = real([...policy.write, ...extra.write]);
  const mounts: SandboxMount[] = [
    { path: "/", access: "read-only" },
    { path: "/tmp", access: "writable", private: true },
  ];
  // A path inside another hidden one (or in /tmp) is gone already: hiding it again would only leave
  // an empty mount point that shows its name.
  const hidden = real(policy.hidden).filter((entry) => entry !== "/");
  const outermost = hidden.filter(
    (entry, index) =>
      !isWithin(entry, "/tmp") &&
      !hidden.some((other, otherIndex) => other !== entry && otherIndex !== index && isWithin(entry, other)),
  );
  for (const entry of new Set(outermost)) mounts.push({ path: entry, access: "hidden" });
  for (const entry of read) mounts.push({ path: entry, access: "read-only" });
  mounts.push({ path: workdir, access: policy.mode === "workspace-write" ? "writable" : "read-only" });
  for (const entry of write) mounts.push({ path: entry, access: "writable" });
  // A secret path a bind covers whole (the bind is it, or holds it) is hidden again; a bind of a
  // part inside it (`read: [~/.gitconfig]`, a CLI's ~/.claude) shows that part, over the hiding.
  const opened: SandboxMount[] = mounts.slice(mounts.length - read.length - 1 - write.length);
  for (const entry of real(policy.alwaysHidden)) {
    if (!opened.some((bound) => isWithin(entry, bound.path))) continue;
    mounts.push({ path: entry, access: "hidden" });
    for (const bound of opened) {
      if (bound.path !== entry && isWithin(bound.path, entry)) mounts.push({ ...bound });
    }
  }
  // Definitions: read-only wherever they are, whatever was bound over or inside them; secret paths
  // (data_dir, the vault, the config and .env files) hidden, whatever the agent's own read, write
  // or workdir named. Only the daemon's own binds inside them (a CLI run's folder) open again.
  for (const entry of real(protectedPaths)) {
    if (opensPast(mounts, entry, "read-only")) mounts.push({ path: entry, access: "read-only" });
  }
  for (const entry of real(policy.protectedHidden)) {
    if (opensPast(mounts, entry, "hidden")) mounts.push({ path: entry, access: "hidden" });
  }
  const workdirAccess = policy.mode === "workspace-write" ? "writable" : "read-only";
  for (const entry of real(policy.internal)) {
    mounts.push({ path: entry, access: entry === workdir ? workdirAccess : "writable" });
  }
  return pinAncestors(mounts);
}

/**
 * A mount point cannot be renamed or removed (EBUSY), but the folders above it can: a process that
 * renames `.claude` away and makes a new `.claude/agents` has replaced a read-only agents folder
 * on the host. So every folder between a writable layer and a hidden or read-only layer inside it
 * is bound onto itself, still writable, right after that writable layer (before anything inside
 * it, which a later bind would cover): its content is unchanged, its name is pinned. A writable
 * layer inside another (a `write:` path inside the workdir) is pinned the same way up to the one
 * that holds it: renaming a folder above it would take it, and the read-only files in it, along,
 * and leave a new folder of the agent's in its place on the host.
 */
function pinAncestors(mounts: readonly SandboxMount[]): SandboxMount[] {
  const pins = new Map<number, Set<string>>();
  mounts.forEach((mount, index) => {
    if (mount.access === "writable" || index < 2) return;
    let inner = mount;
    for (let holder = lastHolder(mounts, index); holder !== undefined; holder = lastHolder(mounts, holder)) {
      const outer = mounts[holder] as SandboxMount;
      if (outer.access !== "writable" || outer.private) return;
      const pinned = pins.get(holder) ?? new Set<string>();
      for (let folder = path.dirname(inner.path); folder !== outer.path && isWithin(folder, outer.path);) {
        pinned.add(folder);
        const parent = path.dirname(folder);
        if (parent === folder) break;
        folder = parent;
      }
      pins.set(holder, pinned);
      inner = outer;
    }
  });
  return mounts.flatMap((mount, index) => {
    const pinned = [...(pins.get(index) ?? [])].sort((first, second) => first.length - second.length);
    return [mount, ...pinned.map((folder): SandboxMount => ({ path: folder, access: "writable" }))];
  });
}

/** The index of the last layer before `index` that holds that layer's path, or undefined. */
function lastHolder(mounts: readonly SandboxMount[], index: number): number | undefined {
  const target = (mounts[index] as SandboxMount).path;
  for (let earlier = index - 1; earlier >= 0; earlier -= 1) {
    if (isWithin(target, (mounts[earlier] as SandboxMount).path)) return earlier;
  }
  return undefined;
}

const OPENNESS: Record<MountAccess, number> = { hidden: 0, "read-only": 1, writable: 2 };

/**
 * Whether the layers so far show `entry`, or anything inside it, more openly than `wanted`: then a
 * layer of `wanted` must go over it. (Nothing is added over a path that is already as closed: an
 * extra mount inside a hidden folder would only show the name of its mount point.)
 */
function opensPast(mounts: readonly SandboxMount[], entry: string, wanted: MountAccess): boolean {
  const limit = OPENNESS[wanted];
  if (OPENNESS[accessOf(mounts, entry)] > limit) return true;
  return mounts.some(
    (mount) =>
      mount.path !== entry &&
      !mount.private &&
      isWithin(mount.path, entry) &&
      OPENNESS[accessOf(mounts, mount.path)] > limit,
  );
}

/**
 * What the sandbox shows of `realPath` (a path with symlinks resolved): the access of the last
 * layer that holds it. A path in the private /tmp counts as hidden: the host's file is not there.
 */
export function accessOf(mounts: readonly SandboxMount[], realPath: string): MountAccess {
  for (let index = mounts.length - 1; index >= 0; index -= 1) {
    const mount = mounts[index] as SandboxMount;
    if (!isWithin(realPath, mount.path)) continue;
    return mount.private ? "hidden" : mount.access;
  }
  return "hidden";
}

/**
 * The path with every symlink resolved, or undefined when nothing is there (a dangling link
 * included). `resolved`: answers already found in the same computation, by path, kept there too.
 * Most paths asked about (the host's socket places) do not exist: once one was found missing, it
 * costs one `access`, not a thrown error; the rest one realpath(3).
 */
export function existingRealPath(
  entry: string,
  resolved?: Map<string, string | undefined>,
): string | undefined {
  if (resolved?.has(entry)) return resolved.get(entry);
  let real: string | undefined;
  try {
    // Either way the answer is realpath(3)'s, found now; only the first syscall differs.
    real = missingLastTime.has(entry) && !existsSync(entry) ? undefined : realpathSync.native(entry);
  } catch {
    real = undefined;
  }
  if (real === undefined) rememberMissing(entry);
  else missingLastTime.delete(entry);
  resolved?.set(entry, real);
  return real;
}

/**
 * Paths that were not there when last resolved (most of the host's socket places): for these an
 * `access` comes first, cheaper than the error a failed realpath throws. A path that was there is
 * resolved at once, without that `access` before it: every tool call resolves some forty paths.
 */
const missingLastTime = new Set<string>();
const MISSING_KEPT = 4_096;

function rememberMissing(entry: string): void {
  if (missingLastTime.size >= MISSING_KEPT) missingLastTime.clear();
  missingLastTime.add(entry);
}
