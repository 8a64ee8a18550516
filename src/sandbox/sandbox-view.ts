import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { HostRule } from "../config/host-rules.js";
import type { SandboxHost } from "./sandbox-host.js";
import { isWithin } from "../util/path-within.js";
import { type MountAccess, accessOf, sandboxMounts } from "./sandbox-mounts.js";
import type { SandboxNetwork, SandboxPolicy } from "./sandbox-policy.js";

/**
 * What a sandboxed child of an agent sees, for a person to check: every path the sandbox's layers
 * name, grouped by what the child finally sees there (a path's access holds for what lies below it
 * unless a deeper path is listed too). `/` is always listed (read-only). A layer that changes
 * nothing (an extra read path in a read-only place) is left out. Null for `mode: off`: nothing is
 * fenced, the child sees what the daemon sees.
 */
export interface SandboxView {
  writable: string[];
  read_only: string[];
  hidden: string[];
  /** Writable paths that are not the host's: a fresh, empty folder per child (the private `/tmp`). */
  private: string[];
  /** `none`, `all` (the host's network), or the hosts reachable through the proxy. */
  network: "none" | "all" | string[];
}

/** The view of one policy (`SandboxHost.policyFor`), or null when its mode is `off`. */
export function sandboxView(policy: SandboxPolicy): SandboxView | null {
  if (policy.mode === "off") return null;
  const mounts = sandboxMounts(policy);
  const view: SandboxView = {
    writable: [],
    read_only: [],
    hidden: [],
    private: [],
    network: networkOf(policy.network),
  };
  const listed = new Set<string>();
  for (const mount of mounts) {
    if (listed.has(mount.path)) continue;
    listed.add(mount.path);
    // The private /tmp, unless a later layer binds the host's over it.
    if (mounts.findLast((other) => isWithin(mount.path, other.path))?.private) {
      view.writable.push(mount.path);
      view.private.push(mount.path);
      continue;
    }
    const access = accessOf(mounts, mount.path);
    const without = mounts.filter((other) => other.path !== mount.path);
    if (mount.path !== "/" && accessOf(without, mount.path) === access) continue;
    listOf(view, access).push(mount.path);
  }
  for (const list of [view.writable, view.read_only, view.hidden, view.private]) list.sort();
  return view;
}

function listOf(view: SandboxView, access: MountAccess): string[] {
  if (access === "writable") return view.writable;
  if (access === "read-only") return view.read_only;
  return view.hidden;
}

function networkOf(network: SandboxNetwork): SandboxView["network"] {
  if (network.kind !== "hosts") return network.kind;
  return network.rules.map(describeHostRule);
}

function describeHostRule(rule: HostRule): string {
  const host = rule.host.includes(":") ? `[${rule.host}]` : rule.host;
  return `${rule.wildcard ? "*." : ""}${host}${rule.port === undefined ? "" : `:${rule.port}`}`;
}

/** The view of what an agent's shell commands and hooks see, or null for `mode: off`. */
export function agentSandboxView(
  host: SandboxHost,
  definition: Pick<AgentDefinition, "id" | "sandbox" | "workdir">,
): SandboxView | null {
  if (definition.sandbox.mode === "off") return null;
  return sandboxView(
    host.policyFor({
      settings: definition.sandbox,
      workdir: definition.workdir,
      owner: `agent "${definition.id}"`,
    }),
  );
}
