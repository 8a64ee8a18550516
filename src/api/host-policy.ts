import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { canonicalHostname, isLoopbackHost } from "../util/loopback-host.js";

export interface HostPolicyOptions {
  /** The address the server binds (`server.host`). */
  bindHost: string;
  /** `server.allowed_hosts`: exact names, `*.example.com` for a domain's sub-names, `*` for any. */
  allowedHosts: readonly string[];
}

/** `Host` headers whose answer is kept; past this many the kept answers are forgotten. */
const KEPT_ANSWERS = 64;

/** Bind addresses that listen on every interface. */
const WILDCARD_HOSTS = new Set(["", "0.0.0.0", "::", "[::]"]);

/**
 * The wildcard addresses as `Host` names (canonical). A client on this machine that connects to
 * `0.0.0.0:7070` or `[::]:7070` reaches the daemon bound there and sends that name, which a
 * rebinding page cannot send for its own name.
 */
const WILDCARD_NAMES = new Set(["0.0.0.0", "[::]"]);

/**
 * Which `Host` headers name this daemon. A web page that rebinds its own DNS name to 127.0.0.1
 * still sends that name, so only names that cannot be rebound pass: the bind address, `localhost`,
 * loopback addresses, when bound to every interface the wildcard address itself (`0.0.0.0`,
 * `[::]`) and the addresses of this machine's interfaces, and the names the user listed. Ports are not compared: the name is what a rebinding page cannot
 * forge.
 */
export function createHostPolicy(options: HostPolicyOptions): (hostHeader: string | undefined) => boolean {
  const wildcard = WILDCARD_HOSTS.has(options.bindHost);
  const bindName = wildcard ? undefined : canonicalHostname(options.bindHost);
  const exact = new Set<string>();
  const suffixes: string[] = [];
  let anyHost = false;
  for (const entry of options.allowedHosts) {
    if (entry === "*") anyHost = true;
    else if (entry.startsWith("*.")) suffixes.push(`.${canonicalHostname(entry.slice(2)) ?? entry.slice(2)}`);
    else exact.add(canonicalHostname(entry) ?? entry.toLowerCase());
  }
  const allowedName = (name: string): boolean =>
    anyHost ||
    isLoopbackHost(name) ||
    name === bindName ||
    (wildcard && WILDCARD_NAMES.has(name)) ||
    exact.has(name) ||
    suffixes.some((suffix) => name.endsWith(suffix));
  // Clients send the same header on every request: parsing it as a URL each time cost more than
  // the rest of the check. An answer that hangs on the machine's addresses is not kept.
  const kept = new Map<string, boolean>();
  return (hostHeader) => {
    if (hostHeader === undefined || hostHeader === "") return false;
    const known = kept.get(hostHeader);
    if (known !== undefined) return known;
    const name = hostnameOf(hostHeader);
    if (name !== undefined && !allowedName(name) && wildcard) return isInterfaceAddress(name);
    const allowed = name !== undefined && allowedName(name);
    if (kept.size >= KEPT_ANSWERS) kept.clear();
    kept.set(hostHeader, allowed);
    return allowed;
  };
}

/** The canonical host name of a `Host` header (`name[:port]`), or undefined when it is malformed. */
export function hostnameOf(hostHeader: string): string | undefined {
  try {
    const url = new URL(`http://${hostHeader}/`);
    if (url.username !== "" || url.password !== "" || url.pathname !== "/" || url.search !== "")
      return undefined;
    return url.hostname.replace(/\.$/, "");
  } catch {
    return undefined;
  }
}

/** An IP address of one of this machine's interfaces, read at the time of the request (DHCP moves them). */
function isInterfaceAddress(name: string): boolean {
  const address = name.replace(/^\[(.*)\]$/, "$1");
  if (isIP(address) === 0) return false;
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (canonicalHostname(entry.address.replace(/%.*$/, "")) === name) return true;
    }
  }
  return false;
}
