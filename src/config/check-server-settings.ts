import type { z } from "zod";
import { isLoopbackHost } from "../util/loopback-host.js";

/** The `server` settings the checks read. */
interface ServerSettings {
  host: string;
  auth: "token" | "none";
  allowed_hosts: string[];
  allowed_origins: string[];
}

/**
 * The combinations of `server` settings that would open the API to any web page, refused as config
 * errors rather than accepted silently:
 *
 * - `auth: none` off loopback;
 * - `auth: none` with `allowed_hosts: ["*"]` (or a wildcard over a whole top-level domain,
 *   `*.com`): the Host check is then the only guard left against a page that rebinds its DNS name to
 *   127.0.0.1, and `*` turns it off — the page would get the whole API, approvals included;
 * - `allowed_origins` entries that are not web origins: `*` (no wildcard is offered: every page
 *   could start runs), `null` (what sandboxed frames and `file:` pages send, which any site can
 *   create), and anything with a path, a query or another scheme, which would never match.
 */
export function checkServerSettings(server: ServerSettings, context: z.RefinementCtx): void {
  if (server.auth === "none" && !isLoopbackHost(server.host)) {
    context.addIssue({
      code: "custom",
      path: ["auth"],
      message: `auth: none is allowed only on a loopback host, not on ${server.host}`,
    });
  }
  if (server.auth === "none") {
    server.allowed_hosts.forEach((entry, index) => {
      if (entry !== "*" && !/^\*\.[^.]+\.?$/.test(entry)) return;
      context.addIssue({
        code: "custom",
        path: ["allowed_hosts", index],
        message:
          `allowed_hosts: "${entry}" with auth: none lets any web page whose DNS name points at this ` +
          "machine (DNS rebinding) use the whole API, approvals included; list the host names you " +
          "use, or keep auth: token",
      });
    });
  }
  server.allowed_origins.forEach((entry, index) => {
    const problem = originProblem(entry);
    if (problem !== undefined) {
      context.addIssue({ code: "custom", path: ["allowed_origins", index], message: problem });
    }
  });
}

/** Why an `allowed_origins` entry is refused, or undefined when it is a web origin. */
function originProblem(entry: string): string | undefined {
  if (entry.trim() === "*") {
    return (
      'allowed_origins does not take "*": every web page could start runs and answer approvals; ' +
      "list each origin, such as https://tools.example.com"
    );
  }
  if (entry.trim().toLowerCase() === "null") {
    return (
      'allowed_origins cannot hold "null": browsers send Origin: null from sandboxed frames and ' +
      "file: pages, which any site can create; serve the tool from an http(s) origin and list that"
    );
  }
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return `"${entry}" is not a web origin; write scheme://host[:port], such as https://tools.example.com`;
  }
  const extra = url.pathname !== "/" || url.search !== "" || url.hash !== "" || url.username !== "";
  if ((url.protocol !== "http:" && url.protocol !== "https:") || extra) {
    return `"${entry}" is not a web origin; write scheme://host[:port] (http or https, no path), such as ${url.protocol === "http:" || url.protocol === "https:" ? url.origin : "https://tools.example.com"}`;
  }
  return undefined;
}
