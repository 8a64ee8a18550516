import { statSync } from "node:fs";
import type { SandboxPolicy } from "./sandbox-policy.js";
import { cachedSandboxMounts, layeredAccess } from "./cached-sandbox-mounts.js";
import { type ExtraBinds, type SandboxMount, existingRealPath } from "./sandbox-mounts.js";
import type { HeldBindSources } from "./held-bind-sources.js";

export type { ExtraBinds } from "./sandbox-mounts.js";

/**
 * The kernel's settings in the sandbox's fresh /proc, bound read-only over it from the host's (the
 * same files: what is per namespace, `net/` or the host name, is looked up by the reader's
 * namespaces, not the mount). A daemon running as root leaves its children uid 0 with no
 * capability, and the kernel lets uid 0 write `/proc/sys` by its file modes alone: a command could
 * set `kernel.core_pattern` to `|/its/workdir/script`, which the kernel then runs as root outside
 * every namespace at the next crash, or reboot the machine through `/proc/sysrq-trigger`.
 * bubblewrap covers both only where its own check finds them writable, which for `/proc/sys` is
 * never (the folder refuses every write check, whatever the files inside allow).
 */
const PROC_COVERS = ["/proc/sys", "/proc/sysrq-trigger"];

/**
 * bubblewrap's arguments for a policy, before `--` and the command: its filesystem layers
 * (`sandboxMounts`, laid out once per set of paths and real paths: cachedSandboxMounts) as mounts,
 * in their order; whether a hidden path is a folder is looked at on every call. Its own PID, IPC, UTS (and, unless `network: all`,
 * network) namespaces; every capability dropped, so root inside cannot unmount what hides a path.
 * With `held`, every bind but the root's is by a descriptor the daemon holds (`--bind-fd`), opened
 * now; without, by path (a bubblewrap without `--bind-fd`).
 */
export function bubblewrapArguments(
  policy: SandboxPolicy,
  extra: ExtraBinds,
  held?: HeldBindSources,
): string[] {
  const mounts = layersWith(policy, extra);
  const args = [
    ...["--die-with-parent", "--new-session", "--cap-drop", "ALL"],
    ...["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"],
    ...(policy.network.kind === "all" ? [] : ["--unshare-net"]),
    ...["--dev", "/dev", "--proc", "/proc"],
    ...PROC_COVERS.flatMap((entry) => ["--ro-bind-try", entry, entry]),
  ];
  const [root, ...layers] = mounts;
  if (root !== undefined) args.unshift(...mountArguments(root));
  for (const mount of layers) args.push(...mountArguments(mount, held));
  args.push("--chdir", existingRealPath(policy.workdir) ?? policy.workdir);
  return args;
}

/**
 * The policy's layers with the extra binds a child needs (perl for the listener handoff, node for
 * the bridge); an extra read that the layers show read-only already (perl in /usr/bin, under the
 * read-only root) is left out: its bind would be one more mount, and bubblewrap reads the whole
 * mount table again for each read-only bind, on every call.
 */
function layersWith(policy: SandboxPolicy, extra: ExtraBinds): readonly SandboxMount[] {
  if (extra.read.length === 0 && extra.write.length === 0) return cachedSandboxMounts(policy);
  const plain = cachedSandboxMounts(policy);
  const read = extra.read.filter((entry) => {
    const real = existingRealPath(entry);
    return real === undefined || layeredAccess(plain, real) !== "read-only";
  });
  if (read.length === 0 && extra.write.length === 0) return plain;
  return cachedSandboxMounts(policy, { read, write: extra.write });
}

/** One layer as bubblewrap arguments; nothing for "/" hidden, which cannot be. */
function mountArguments(mount: SandboxMount, held?: HeldBindSources): string[] {
  if (mount.private) return ["--tmpfs", mount.path];
  if (mount.access !== "hidden" && held !== undefined) return held.bind(mount.path, mount.access);
  if (mount.access === "read-only") return ["--ro-bind", mount.path, mount.path];
  if (mount.access === "writable") return ["--bind", mount.path, mount.path];
  if (mount.path === "/") return [];
  return isDirectory(mount.path) ? ["--tmpfs", mount.path] : ["--ro-bind", "/dev/null", mount.path];
}

function isDirectory(entry: string): boolean {
  try {
    return statSync(entry).isDirectory();
  } catch {
    return false;
  }
}
