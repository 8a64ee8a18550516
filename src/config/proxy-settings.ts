import { isIP } from "node:net";
import { z } from "zod";

/** Names fastify's trustProxy (proxy-addr) takes for address ranges. */
const RANGE_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** Why a `trust_proxy` entry is refused, or undefined when it is an address, a CIDR or a range name. */
function proxyEntryProblem(entry: string): string | undefined {
  if (RANGE_NAMES.has(entry)) return undefined;
  const [address = "", prefix, extra] = entry.split("/");
  const family = isIP(address);
  const bits = family === 4 ? 32 : 128;
  if (family !== 0 && extra === undefined) {
    if (prefix === undefined) return undefined;
    if (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits) return undefined;
  }
  return (
    `"${entry}" is not an address, a CIDR range (10.0.0.0/8, fd00::/8) or one of loopback, ` +
    "linklocal, uniquelocal"
  );
}

/**
 * `server.trust_proxy`: which peers' X-Forwarded-For, -Proto and -Host count (fastify's trustProxy).
 * `false` (the default): none, the socket's address and scheme are the request's. A list: the
 * proxies at those addresses or ranges. A number: that many hops from the socket. `true`: every
 * peer, for a port only the proxy can reach.
 */
export const TrustProxySchema = z.union([
  z.boolean(),
  z.number().int().min(1),
  z
    .array(z.string().trim().min(1))
    .min(1)
    .superRefine((entries, context) => {
      entries.forEach((entry, index) => {
        const problem = proxyEntryProblem(entry);
        if (problem !== undefined) context.addIssue({ code: "custom", path: [index], message: problem });
      });
    }),
]);
export type TrustProxy = z.infer<typeof TrustProxySchema>;

/**
 * `server.secure_cookies`: whether the session cookie is marked Secure. `auto`: when the request
 * came over https (behind a proxy, its X-Forwarded-Proto counts once the proxy is trusted).
 */
export const SecureCookiesSchema = z.enum(["auto", "always", "never"]);
export type SecureCookies = z.infer<typeof SecureCookiesSchema>;
