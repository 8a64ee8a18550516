import { lstatSync, realpathSync } from "node:fs";
import path from "node:path";
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
 */
export function sandboxMounts(policy: SandboxPolicy, extra: ExtraBinds = NO_EXTRA): SandboxMount[] {
  const workdir = existingRealPath(policy.workdir) ?? policy.workdir;
  const real = (entries: readonly string[]) => entries.flatMap((entry) => existingRealPath(entry) ?? []);
  const read = real([...policy.read, ...extra.read]);
  const write = real([...policy.write, ...extra.write]);
  const mounts: SandboxMount[] = [
    { path: "/", access: "read-only" },
    { path: "/tmp", access: "writable", private: true },
  ];
  // A path inside another hidden one (or in /tmp) is gone already: hiding it again would only leave
  // an empty mount point that shows its name.
  const hidden = real(policy.hidden);
  const outermost = hidden.filter(
    (entry, index) =>
      !isInside(entry, "/tmp") &&
      !hidden.some((other, otherIndex) => other !== entry && otherIndex !== index && isInside(entry, other)),
  );
  for (const entry of new Set(outermost)) mounts.push({ path: entry, access: "hidden" });
  for (const entry of read) mounts.push({ path: entry, access: "read-only" });
  mounts.push({ path: workdir, access: policy.mode === "workspace-write" ? "writable" : "read-only" });
  for (const entry of write) mounts.push({ path: entry, access: "writable" });
  // A secret path inside a bind is hidden again, unless the workdir or a bind lies inside it.
  const opened = [workdir, ...read, ...write];
  for (const entry of real(policy.alwaysHidden)) {
    if (opened.some((bound) => isInside(bound, entry))) continue;
    if (opened.some((bound) => isInside(entry, bound))) mounts.push({ path: entry, access: "hidden" });
  }
  // Definitions: read-only wherever they are, whatever was bound over them; secret ones hidden.
  for (const entry of real(policy.protected)) {
    if (accessOf(mounts, entry) === "writable") mounts.push({ path: entry, access: "read-only" });
  }
  for (const entry of real(policy.protectedHidden)) {
    if (accessOf(mounts, entry) !== "hidden") mounts.push({ path: entry, access: "hidden" });
  }
  return mounts;
}

/**
 * What the sandbox shows of `realPath` (a path with symlinks resolved): the access of the last
 * layer that holds it. A path in the private /tmp counts as hidden: the host's file is not there.
 */
export function accessOf(mounts: readonly SandboxMount[], realPath: string): MountAccess {
  for (let index = mounts.length - 1; index >= 0; index -= 1) {
    const mount = mounts[index] as SandboxMount;
    if (!isInside(realPath, mount.path)) continue;
    return mount.private ? "hidden" : mount.access;
  }
  return "hidden";
}

/** The path with every symlink resolved, or undefined when nothing is there. */
export function existingRealPath(entry: string): string | undefined {
  try {
    lstatSync(entry);
    return realpathSync(entry);
  } catch {
    return undefined;
  }
}

/** True when `inner` is `outer` or lies below it. */
export function isInside(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return (
    relative === "" ||
    !(relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative))
  );
}
