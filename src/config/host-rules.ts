import net from "node:net";

/** One entry of a `network:` host list, parsed: `api.github.com`, `*.npmjs.org`, `127.0.0.1:8080`. */
export interface HostRule {
  /** Lowercase host name or IP address; for a wildcard, the suffix after `*.`. */
  host: string;
  wildcard: boolean;
  /** Undefined: any port. */
  port: number | undefined;
}

/** `host`, `*.domain`, `host:port`, `[v6]:port` or a bare IPv6 address. */
export const HOST_ENTRY_PATTERN =
  /^(\*\.)?([A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]+)(:\d{1,5})?$/;

/** Parses one host-list entry; undefined when it is not one. */
export function parseHostRule(entry: string): HostRule | undefined {
  const trimmed = entry.trim();
  if (net.isIPv6(trimmed)) return { host: normalHost(trimmed), wildcard: false, port: undefined };
  const match = HOST_ENTRY_PATTERN.exec(trimmed);
  if (!match) return undefined;
  const wildcard = match[1] !== undefined;
  const host = normalHost(match[2] ?? "");
  const port = match[3] === undefined ? undefined : Number(match[3].slice(1));
  if (port !== undefined && (port < 1 || port > 65_535)) return undefined;
  if (host === "" || (wildcard && net.isIP(host) !== 0)) return undefined;
  return { host, wildcard, port };
}

/** `host:port` as a host-list entry writes it: an IPv6 address between brackets (`[::1]:8080`). */
export function hostAndPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** Lowercase, without IPv6 brackets or a trailing dot. */
export function normalHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
}

/**
 * The rule of `rules` that lets `host:port` through, or undefined. `*.example.com` matches every
 * subdomain of example.com, not example.com itself, and never an IP address; a rule without a port
 * allows every port.
 */
export function matchHostRule(rules: readonly HostRule[], host: string, port: number): HostRule | undefined {
  const wanted = normalHost(host);
  return rules.find((rule) => {
    if (rule.port !== undefined && rule.port !== port) return false;
    // `*.1` is a name suffix: it must not match the address 10.0.0.1, which is never looked up.
    if (rule.wildcard && net.isIP(wanted) !== 0) return false;
    return rule.wildcard ? wanted.endsWith(`.${rule.host}`) : wanted === rule.host;
  });
}

/** True for names and addresses of this machine's loopback (and the unspecified address). */
export function isLoopbackHost(host: string): boolean {
  const wanted = normalHost(host);
  if (wanted === "localhost" || wanted.endsWith(".localhost")) return true;
  if (net.isIPv4(wanted)) return wanted.startsWith("127.") || wanted === "0.0.0.0";
  if (net.isIPv6(wanted)) {
    if (wanted === "::1" || wanted === "::") return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(wanted)?.[1];
    return mapped !== undefined && isLoopbackHost(mapped);
  }
  return false;
}
