import path from "node:path";
import { AgentdError } from "../../errors/agentd-error.js";
import { cachedSandboxMounts, layeredAccess, readLayersOf } from "../../sandbox/cached-sandbox-mounts.js";
import type { MountAccess, SandboxMount } from "../../sandbox/sandbox-mounts.js";
import type { SandboxPolicy } from "../../sandbox/sandbox-policy.js";
import { matchesUnmadeName } from "../../sandbox/script-candidates.js";
import { isWithin } from "../../util/path-within.js";

/** What the agent's sandbox shows of a real path: the file tools grant no more than that. */
export interface FileAccess {
  (realPath: string): MountAccess;
  /**
   * Whether the sandbox shows the path at all (reading needs no more): the same answer, found
   * without the protected paths unless the path is hidden without them.
   */
  shows(realPath: string): boolean;
  /**
   * Whether a new file or folder may be made at the path: not one a hook, MCP server or CLI tool
   * command names that does not exist yet (the sandbox cannot bind a missing name read-only; the
   * file tools refuse to make it), nor anything inside it (`python3 gate.py` runs a folder
   * `gate.py`'s `__main__.py`, `node server.js` a folder's `index.js`), nor one of the names such
   * a command leaves undecided until it runs.
   */
  mayCreate(realPath: string): boolean;
}

/** Unsandboxed (`mode: off`): only the workdir fence applies. */
const UNSANDBOXED: FileAccess = Object.assign((): MountAccess => "writable", {
  shows: () => true,
  mayCreate: () => true,
});

/** One policy's layers, computed on the first check it needs (a policy is made per call). */
const accessByPolicy = new WeakMap<SandboxPolicy, FileAccess>();

/**
 * The file tools' view of the agent's sandbox: what a sandboxed command of the same agent could do
 * to a path. A hidden path (the vault, a protected config file) cannot be read; one that is not
 * writable (the workdir in `mode: read-only`, a protected agents folder) cannot be written.
 */
export function fileAccessOf(policy: SandboxPolicy): FileAccess {
  if (policy.mode === "off") return UNSANDBOXED;
  let access = accessByPolicy.get(policy);
  if (access === undefined) {
    let mounts: readonly SandboxMount[] | undefined;
    let readMounts: readonly SandboxMount[] | undefined;
    const exact = (realPath: string) => layeredAccess((mounts ??= cachedSandboxMounts(policy)), realPath);
    access = Object.assign(exact, {
      shows: (realPath: string) =>
        layeredAccess((readMounts ??= readLayersOf(policy)), realPath) !== "hidden" ||
        exact(realPath) !== "hidden",
      mayCreate: (realPath: string) =>
        !(policy.unmade ?? []).some((unmade) => isWithin(realPath, unmade)) &&
        !matchesUnmadeName(policy.unmadeNames ?? [], path.basename(realPath)),
    });
    accessByPolicy.set(policy, access);
  }
  return access;
}

/**
 * Refuses with TOOL_DENIED unless the sandbox lets the agent `need` `realPath`: reading needs it
 * not hidden, writing (a file, or a new entry in a folder) needs it writable. `shown` names it.
 */
export function requireAccess(
  access: FileAccess,
  realPath: string,
  need: "read" | "write",
  shown: string,
): void {
  if (need === "read" && access.shows(realPath)) return;
  const granted = access(realPath);
  if (granted === "writable" || (need === "read" && granted === "read-only")) return;
  const what = granted === "hidden" ? "hidden from" : "read-only for";
  throw new AgentdError("TOOL_DENIED", `"${shown}" is ${what} this agent by its sandbox`, {
    hint:
      granted === "hidden"
        ? "the agent's commands cannot see it either; do not retry"
        : "the agent may not change it (sandbox mode read-only, or a protected definition); do not retry",
    details: { path: shown, access: granted },
  });
}

/**
 * Refuses with TOOL_DENIED to make a file a hook command names that does not exist yet, or a
 * folder in its place: made by this agent, it would run as another agent's hook, in that agent's
 * sandbox.
 */
export function requireCreatable(access: FileAccess, realPath: string, shown: string): void {
  if (access.mayCreate(realPath)) return;
  throw new AgentdError(
    "TOOL_DENIED",
    `"${shown}" is named by a hook, MCP server or CLI tool command and may not be made by an agent`,
    {
      hint: "a hook's script is the operator's to write; do not retry",
      details: { path: shown, access: "read-only" },
    },
  );
}
