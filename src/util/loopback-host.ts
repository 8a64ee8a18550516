import { isIP } from "node:net";

/**
 * True for a host that only this machine can reach: `localhost`, 127.0.0.0/8, `::1` and the
 * IPv4-mapped form of a 127 address, in any spelling a URL accepts (`[::1]`, `127.1`, `0x7f.1`).
 */
export function isLoopbackHost(host: string): boolean {
  const name = canonicalHostname(host);
  if (name === undefined) return false;
  if (name === "localhost") return true;
  if (isIP(name) === 4) return name.startsWith("127.");
  return name === "[::1]" || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(name);
}

/**
 * A host name as a browser sends and compares it: lowercased, trailing dot dropped, IPv4 in dotted
 * form, IPv6 in brackets and compressed. Undefined when it is not a valid host.
 */
export function canonicalHostname(host: string): string | undefined {
  const bracketed = isIP(host) === 6 ? `[${host}]` : host;
  try {
    const url = new URL(`http://${bracketed}/`);
    if (url.port !== "" || url.username !== "" || url.pathname !== "/") return undefined;
    return url.hostname.replace(/\.$/, "");
  } catch {
    return undefined;
  }
}
