import type dns from "node:dns";
import type net from "node:net";
import { type DnsLookupQueue, lookupAll } from "./dns-lookup-queue.js";
import { type HostRule, hostAndPort, isLoopbackHost, matchHostRule } from "../config/host-rules.js";
import { internalAddressClass, reachesThisMachine } from "./address-class.js";
import { isPort } from "./proxy-target.js";

/** Why a host:port is refused, or undefined when `rules` let it through. */
export function hostRefusal(rules: readonly HostRule[], host: string, port: number): string | undefined {
  if (!isPort(port)) return `port ${String(port)} is not in 1-65535`;
  const rule = matchHostRule(rules, host, port);
  if (rule === undefined) return `${hostAndPort(host, port)} is not in the sandbox's network list`;
  return undefined;
}

/** What a {@link guardedLookup} lets through besides public addresses. */
export interface LookupGuard {
  /** Config `sandbox.private_addresses: allow`: private, link-local, CGNAT… answers pass (loopback does not). */
  privateAddresses?: boolean | undefined;
  /** The proxy's lookups (bounds how many run at once); none: dns.lookup directly. */
  queue?: DnsLookupQueue | undefined;
}

/** The failure of a lookup whose answer the guard refused; `message` says the address, its class and the fix. */
export interface AddressRefusal extends NodeJS.ErrnoException {
  code: "EACCES";
  addressRefused: true;
}

/** True for the failure {@link guardedLookup} reports for an address it refuses. */
export function isAddressRefusal(error: unknown): error is AddressRefusal {
  return error instanceof Error && (error as Partial<AddressRefusal>).addressRefused === true;
}

/**
 * Resolves like dns.lookup, but refuses a name when any of its addresses is internal: loopback (and
 * the unspecified address) unless the rule that let it through names a loopback host itself, so an
 * allowed name cannot lead to the daemon's API; private, link-local (cloud metadata), CGNAT, unique
 * local, multicast and reserved ranges unless `guard.privateAddresses`, so a name an attacker
 * controls under an allowed wildcard cannot lead into the host's network (DNS rebinding). The
 * connection is made to the address this lookup answers, so nothing can change between the check
 * and the connect. An IP address written as the host is not looked up: it is allowed as written.
 */
export function guardedLookup(rule: HostRule | undefined, guard: LookupGuard = {}): net.LookupFunction {
  const loopbackAllowed = rule !== undefined && isLoopbackHost(rule.host);
  return (hostname, options, callback) => {
    const answer = (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      for (const entry of addresses) {
        const refusal = addressRefusal(hostname, entry.address, loopbackAllowed, guard.privateAddresses);
        if (refusal !== undefined) return callback(refusal, "", 0);
      }
      if (options.all)
        return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
      callback(null, first.address, first.family);
    };
    if (guard.queue) guard.queue.lookup(hostname, options, answer);
    else lookupAll(hostname, options, answer);
  };
}

function addressRefusal(
  hostname: string,
  address: string,
  loopbackAllowed: boolean,
  privateAllowed: boolean | undefined,
): AddressRefusal | undefined {
  const kind = internalAddressClass(address);
  if (kind === undefined) return undefined;
  const local = reachesThisMachine(kind);
  if (local ? loopbackAllowed : privateAllowed === true) return undefined;
  const fix = local
    ? "list the loopback address itself (e.g. 127.0.0.1:8080) to reach this machine"
    : `list the address itself (e.g. "${address.includes(":") ? `[${address}]` : address}:443") in sandbox.network, ` +
      "or set sandbox.private_addresses: allow in config, if the sandbox may reach internal hosts";
  const message = `${hostname} resolves to ${address}, a ${kind} address, which is refused: ${fix}`;
  return Object.assign(new Error(message), { code: "EACCES" as const, addressRefused: true as const });
}
