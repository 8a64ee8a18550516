import type dns from "node:dns";
import type net from "node:net";
import { type DnsLookupQueue, lookupAll } from "./dns-lookup-queue.js";
import { type HostRule, isLoopbackHost, matchHostRule } from "../config/host-rules.js";
import { isPort } from "./proxy-target.js";

/** Why a host:port is refused, or undefined when `rules` let it through. */
export function hostRefusal(rules: readonly HostRule[], host: string, port: number): string | undefined {
  if (!isPort(port)) return `port ${String(port)} is not in 1-65535`;
  const rule = matchHostRule(rules, host, port);
  if (rule === undefined) return `${host}:${port} is not in the sandbox's network list`;
  return undefined;
}

/**
 * Resolves like dns.lookup, but refuses a name that resolves to loopback unless the rule that let
 * it through names a loopback host itself: an allowed name must not lead to the daemon's API.
 * A proxy passes its `queue`, which bounds how many lookups run at once.
 */
export function guardedLookup(rule: HostRule | undefined, queue?: DnsLookupQueue): net.LookupFunction {
  const loopbackAllowed = rule !== undefined && isLoopbackHost(rule.host);
  return (hostname, options, callback) => {
    const answer = (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      const refused = !loopbackAllowed && addresses.some((entry) => isLoopbackHost(entry.address));
      if (refused) {
        const failure = Object.assign(new Error(`${hostname} resolves to a loopback address`), {
          code: "EACCES",
        });
        return callback(failure, "", 0);
      }
      if (options.all)
        return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
      callback(null, first.address, first.family);
    };
    if (queue) queue.lookup(hostname, options, answer);
    else lookupAll(hostname, options, answer);
  };
}
