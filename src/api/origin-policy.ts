/** What the origin check reads from a request. */
export interface OriginFacts {
  method: string;
  /** `http` or `https`: how the request reached the server. */
  protocol: string;
  host: string | undefined;
  origin: string | undefined;
  secFetchSite: string | undefined;
}

/** Methods that only read: a page on another site can send them but not read the answer (no CORS headers). */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Whether a request may change state as far as its origin goes. A browser names the page that sent
 * a request in `Origin` (every POST, `no-cors` included) or at least in `Sec-Fetch-Site`; a request
 * from another origin is refused unless that origin is listed in `server.allowed_origins`.
 * Programs (curl, the CLI) send neither header and pass; they still need the token.
 */
export function createOriginPolicy(allowedOrigins: readonly string[]): (facts: OriginFacts) => boolean {
  const allowed = new Set(allowedOrigins.map((origin) => serializedOrigin(origin) ?? origin));
  return (facts) => {
    if (SAFE_METHODS.has(facts.method.toUpperCase())) return true;
    if (facts.origin !== undefined) {
      const origin = serializedOrigin(facts.origin);
      if (origin === undefined) return false; // `null` (sandboxed frames, file: pages) and garbage
      if (allowed.has(origin)) return true;
      return facts.host !== undefined && origin === serializedOrigin(`${facts.protocol}://${facts.host}`);
    }
    const site = facts.secFetchSite?.toLowerCase();
    return site === undefined || site === "same-origin" || site === "none";
  };
}

/** `scheme://host[:port]` as browsers serialize an origin (default port dropped), or undefined. */
function serializedOrigin(text: string): string | undefined {
  try {
    const url = new URL(text);
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}
