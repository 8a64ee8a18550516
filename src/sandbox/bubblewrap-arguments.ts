import { lstatSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import type { SandboxPolicy } from "./sandbox-policy.js";

/** Extra binds one child needs beyond its policy: the network proxy's socket, node for the bridge. */
export interface ExtraBinds {
  read: string[];
  /** Bound read-write: a unix socket must be connectable. */
  write: string[];
}

/**
 * bubblewrap's arguments for a policy, before `--` and the command. The order is the point: the
 * whole filesystem read-only, a private /tmp, the hidden paths, then what is made visible again
 * (extra reads, the workdir, extra writes), then the secret paths hidden once more, so no bind can
 * reveal the vault or data_dir. Its own PID, IPC, UTS (and, unless `network: all`, network)
 * namespaces; every capability dropped, so root inside cannot unmount what hides a path.
 */
export function bubblewrapArguments(policy: SandboxPolicy, extra: ExtraBinds): string[] {
  const workdir = existingRealPath(policy.workdir) ?? policy.workdir;
  const read = [...policy.read, ...extra.read].flatMap((entry) => existingRealPath(entry) ?? []);
  const write = [...policy.write, ...extra.write].flatMap((entry) => existingRealPath(entry) ?? []);
  const args = [
    ...["--die-with-parent", "--new-session", "--cap-drop", "ALL"],
    ...["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"],
    ...(policy.network.kind === "all" ? [] : ["--unshare-net"]),
    ...["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"],
  ];
  // A path inside another hidden one (or in /tmp) is gone already: hiding it again would only leave
  // an empty mount point that shows its name.
  const hidden = policy.hidden.flatMap((entry) => existingRealPath(entry) ?? []);
  const outermost = hidden.filter(
    (entry, index) =>
      !isInside(entry, "/tmp") &&
      !hidden.some((other, otherIndex) => other !== entry && otherIndex !== index && isInside(entry, other)),
  );
  for (const entry of new Set(outermost)) args.push(...hideArguments(entry));
  for (const entry of read) args.push("--ro-bind", entry, entry);
  args.push(policy.mode === "workspace-write" ? "--bind" : "--ro-bind", workdir, workdir);
  for (const entry of write) args.push("--bind", entry, entry);
  // A secret path inside a bind is hidden again, unless the workdir or a bind lies inside it.
  const opened = [workdir, ...read, ...write];
  for (const hidden of policy.alwaysHidden) {
    const real = existingRealPath(hidden);
    if (real === undefined || opened.some((entry) => isInside(entry, real))) continue;
    if (opened.some((entry) => isInside(real, entry))) args.push(...hideArguments(real));
  }
  args.push("--chdir", workdir);
  return args;
}

/** An empty folder over a folder, an empty file over anything else; nothing for a missing path. */
function hideArguments(entry: string): string[] {
  const real = existingRealPath(entry);
  if (real === undefined || real === "/") return [];
  return statSync(real).isDirectory() ? ["--tmpfs", real] : ["--ro-bind", "/dev/null", real];
}

/** The path with every symlink resolved, or undefined when nothing is there. */
function existingRealPath(entry: string): string | undefined {
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
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}
