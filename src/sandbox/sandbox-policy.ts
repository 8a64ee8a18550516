import type { HostRule } from "../config/host-rules.js";
import type { SandboxLimits, SandboxMode } from "../config/sandbox-settings.js";

/** How a sandboxed child reaches the network. */
export type SandboxNetwork =
  | { kind: "none" }
  | { kind: "all" }
  /** Only through the daemon's proxy, which lets these hosts through. */
  | {
      kind: "hosts";
      rules: HostRule[];
      /** Config `sandbox.private_addresses: allow`: allowed names may resolve to internal addresses. */
      privateAddresses?: boolean | undefined;
    };

/**
 * Everything needed to start one child inside the sandbox, resolved for that child (an agent's
 * shell call, a CLI worker, an MCP server): made by `SandboxHost.policyFor`, consumed by
 * `startTrackedProcess`. Plain data: paths are absolute.
 */
export interface SandboxPolicy {
  mode: SandboxMode;
  network: SandboxNetwork;
  /** Writable in `workspace-write` mode, read-only in `read-only`; the child starts there. */
  workdir: string;
  /** Hidden first (empty folder, or an empty file): data_dir, vault, $HOME, other workspaces… */
  hidden: string[];
  /** Hidden again after every bind (a `read` path over data_dir must not reveal the vault). */
  alwaysHidden: string[];
  /**
   * Read-only over every bind, the workdir's included: what defines what the daemon runs (agents
   * folders, presets, hook and MCP commands). A sandboxed process must never change them.
   * `policyFor` looks them up when this is first read (a read the other layers allow needs none).
   */
  protected: string[];
  /**
   * Files a hook command names that do not exist yet, where this sandbox could make them: a missing
   * name cannot be bound read-only, so the file tools refuse to create them (another agent's hook
   * would run what this agent wrote). Looked up when first read, as `protected` is.
   */
  unmade?: string[];
  /**
   * File names (`*` for any text) no file tool may make anywhere: scripts a hook, MCP server or CLI
   * tool command names whose folder is known only when it runs (`"$PROJECT"/gate.sh`), and every
   * word of a command that builds what it runs when it runs (`xargs`, `sh -c "$X"`).
   */
  unmadeNames?: string[];
  /**
   * Hidden over every bind, the workdir's and the agent's own `read`/`write` included: data_dir,
   * the vault, the config file, `.env`.
   */
  protectedHidden: string[];
  /**
   * The daemon's own writable binds inside a `protectedHidden` path, opened again after it: a CLI
   * run's folder in data_dir, a default workspace when data_dir holds the workspaces.
   */
  internal: string[];
  /** Visible read-only even inside a hidden folder (extra `read`, a CLI's own executable). */
  read: string[];
  /**
   * Files the system needs from inside a hidden socket place (`/etc/resolv.conf` leading into
   * systemd-resolved's folder), visible read-only after `read`. `policyFor` looks them up when
   * this is first read: a read-only bind never hides a path, so the file tools' read check, which
   * leaves them out, asks for them only for a path it would otherwise refuse.
   */
  systemRead?: string[];
  /** Writable even inside a hidden folder (extra `write`, a CLI's config folder). */
  write: string[];
  /**
   * Host unix sockets config lists (`sandbox.unix_sockets`): bound writable. A non-empty list runs
   * the child without the seccomp filter that otherwise refuses every unix socket.
   */
  unixSockets: string[];
  /**
   * What the child's sandboxed processes may consume: at most `processes` at once (RLIMIT_NPROC,
   * counted in the sandbox's own user namespace), CPU priority `nice`; each is also the OOM
   * killer's first choice (oom_score_adj 1000). See child-limits.ts.
   */
  limits: SandboxLimits;
  /** The PATH bubblewrap is looked up in. */
  searchPath: string;
  /** Who the sandbox is for, in messages: `agent "notes"`, `MCP server "github"`. */
  owner: string;
  /**
   * The agent's and config's own `read`/`write` paths that `policyFor` kept, and the folders a
   * sandboxed process may write (every agent's workdir and write paths): a link in one of those on
   * the way to such a path may have been planted. One that became such a link since (during an
   * approval's wait) is refused when the child starts.
   */
  linkChecked?: { paths: readonly string[]; folders: () => Iterable<string> };
}
