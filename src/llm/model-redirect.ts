/** One request of the model client, as it goes out (and is sent again on a redirect). */
export interface OutgoingRequest {
  url: URL;
  method: string;
  /** Flat name, value list. */
  headers: string[];
  body: string | null;
}

/** The statuses `fetch` follows. */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** The headers that describe a request's body, dropped with it (fetch's "request-body-header names"). */
const BODY_HEADERS = new Set([
  "content-encoding",
  "content-language",
  "content-location",
  "content-type",
  "content-length",
]);

/** The headers that carry credentials, dropped when a redirect leaves the origin, as `fetch` drops them. */
const CREDENTIAL_HEADERS = new Set(["authorization", "proxy-authorization", "cookie"]);

/**
 * The request a redirect answer asks for, by `fetch`'s rules, or undefined when `status` is not a
 * redirect or names no place to go. A 301 or 302 to a POST, and a 303 to anything but GET or HEAD,
 * are followed with a GET without the body (so an SSO gateway or captive portal that answers 302
 * is never sent the conversation); 307 and 308 keep the method and the body. The credentials stay
 * only within the origin. A place that is not http(s) is refused as `fetch` refuses it.
 */
export function redirectedRequest(
  request: OutgoingRequest,
  status: number,
  location: string | string[] | undefined,
): OutgoingRequest | undefined {
  const place = Array.isArray(location) ? location[0] : location;
  if (!REDIRECT_STATUSES.has(status) || place === undefined) return undefined;
  const url = new URL(place, request.url);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError("fetch failed", { cause: new Error(`redirect to a ${url.protocol} URL`) });
  }
  const toGet =
    ((status === 301 || status === 302) && request.method === "POST") ||
    (status === 303 && request.method !== "GET" && request.method !== "HEAD");
  const leavesOrigin = url.origin !== request.url.origin;
  const headers: string[] = [];
  for (let index = 0; index < request.headers.length; index += 2) {
    const name = (request.headers[index] as string).toLowerCase();
    if (name === "host") continue;
    if (toGet && BODY_HEADERS.has(name)) continue;
    if (leavesOrigin && CREDENTIAL_HEADERS.has(name)) continue;
    headers.push(request.headers[index] as string, request.headers[index + 1] as string);
  }
  return {
    url,
    method: toGet ? "GET" : request.method,
    headers,
    body: toGet ? null : request.body,
  };
}
