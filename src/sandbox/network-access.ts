import { AgentdError } from "../errors/agentd-error.js";
import {
  type HostRule,
  hostAndPort,
  isLoopbackHost,
  matchHostRule,
  normalHost,
} from "../config/host-rules.js";
import { guardedLookup, isAddressRefusal } from "./network-proxy.js";
import type { LookupGuard } from "./proxy-host-check.js";
import type { SandboxPolicy } from "./sandbox-policy.js";

/**
 * The in-process side of the sandbox's network rule, for `http_request`: resolves when the policy
 * lets `url` through, else throws HOST_NOT_ALLOWED saying what to add. `mode: off` and `network:
 * all` let everything through; `none` nothing; a host list what it names — and an allowed name
 * that resolves to loopback only when the entry itself names a loopback host, to another internal
 * address (private, link-local, CGNAT…) only under config `sandbox.private_addresses: allow`.
 * Returns the host-list rule that let it through (undefined under `off` or `all`): the request must
 * connect with `guardedLookup(rule, lookupGuard(policy))`, or a name resolving elsewhere the second
 * time would reach what the check refused.
 */
export async function assertHostAllowed(policy: SandboxPolicy, url: URL): Promise<HostRule | undefined> {
  if (policy.mode === "off" || policy.network.kind === "all") return undefined;
  const host = normalHost(url.hostname);
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const where = hostAndPort(host, port);
  const hint = `add "${url.port ? where : host}" to sandbox.network in the agent file (or config), if this agent may reach it`;
  if (policy.network.kind === "none") {
    throw new AgentdError("HOST_NOT_ALLOWED", `${where} refused: this agent's sandbox has network: none`, {
      hint,
    });
  }
  const rule = matchHostRule(policy.network.rules, host, port);
  if (rule === undefined) {
    throw new AgentdError(
      "HOST_NOT_ALLOWED",
      `${where} refused: it is not in this agent's sandbox network list`,
      {
        hint,
      },
    );
  }
  if (isLoopbackHost(host)) return rule;
  await new Promise<void>((resolve, reject) => {
    guardedLookup(rule, lookupGuard(policy))(host, {}, (error) => {
      if (isAddressRefusal(error)) {
        const [what, fix] = error.message.split(", which is refused: ");
        reject(
          new AgentdError("HOST_NOT_ALLOWED", `${where} refused: ${what ?? error.message}`, { hint: fix }),
        );
      } else resolve();
    });
  });
  return rule;
}

/** How `http_request` resolves an allowed name under `policy`: see {@link guardedLookup}. */
export function lookupGuard(policy: SandboxPolicy): LookupGuard {
  return { privateAddresses: policy.network.kind === "hosts" && policy.network.privateAddresses === true };
}
