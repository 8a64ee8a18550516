import net from "node:net";

/** Where a request asks the proxy to go: `host` without IPv6 brackets, `authority` as a Host header says it. */
export interface ProxyTarget {
  host: string;
  port: number;
  authority: string;
}

/** A target the proxy does not try, and why (said in a `400`). */
export interface MalformedTarget {
  malformed: string;
}

const MAX_HOST_LENGTH = 253;
/** A DNS name or IPv4 address: letters, digits, `_` and `-` between dots, one trailing dot at most. */
const HOST_NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?$/;
const CONNECT_AUTHORITY = /^(\[[^\]]*\]|[^:[\]]+):(\d{1,5})$/;

/** The target of `CONNECT host:port` or `CONNECT [v6]:port`. */
export function connectTarget(authority: string): ProxyTarget | MalformedTarget {
  const match = CONNECT_AUTHORITY.exec(authority);
  if (!match?.[1] || match[2] === undefined) {
    return { malformed: "a CONNECT takes host:port (or [v6]:port), port 1-65535" };
  }
  return checked(match[1], Number(match[2]), authority);
}

/** The target of an absolute-URI request (`GET http://host[:port]/path`), port 80 when none. */
export function forwardTarget(url: string): (ProxyTarget & { path: string }) | MalformedTarget {
  if (!/^http:\/\//i.test(url)) {
    return { malformed: "this proxy takes absolute http:// URLs (use CONNECT for https)" };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { malformed: "the request's URL is not a valid URL" };
  }
  const port = parsed.port === "" ? 80 : Number(parsed.port);
  const target = checked(parsed.hostname, port, parsed.host);
  return "malformed" in target ? target : { ...target, path: `${parsed.pathname}${parsed.search}` };
}

/** True for a port a TCP connection may go to. */
export function isPort(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 65_535;
}

function checked(rawHost: string, port: number, authority: string): ProxyTarget | MalformedTarget {
  if (!isPort(port)) return { malformed: `port ${String(port)} is not in 1-65535` };
  const bracketed = /^\[(.*)\]$/.exec(rawHost);
  if (bracketed) {
    const inner = bracketed[1] ?? "";
    return net.isIPv6(inner)
      ? { host: inner, port, authority }
      : { malformed: "the host between [ ] is not an IPv6 address" };
  }
  if (rawHost.length > MAX_HOST_LENGTH || !HOST_NAME.test(rawHost)) {
    return { malformed: "the host is not a DNS name or an IP address" };
  }
  return { host: rawHost, port, authority };
}
