import { createHash } from "node:crypto";
import { readFile, readdir } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { gzipSync } from "node:zlib";

/** One file of the dashboard, held in memory with its gzip form and an ETag. */
export interface DashboardAsset {
  contentType: string;
  body: Buffer;
  gzipped: Buffer;
  etag: string;
}

/** Every file the dashboard serves, by URL path (`/`, `/ui/main.js`, `/ui/vendor/preact.module.js`…). */
export interface DashboardAssets {
  files: ReadonlyMap<string, DashboardAsset>;
  /** The Content-Security-Policy of the page: its own files only, plus the inline import map by hash. */
  contentSecurityPolicy: string;
}

/** Where the built page lives: `dist/dashboard/web`, from this module in dist/dashboard/ or in a CLI chunk in dist/chunks/. */
const WEB_DIRECTORY = path.resolve(import.meta.dirname, "../dashboard/web");

/** The preact modules the page imports by bare name (through the import map), in the preact package. */
const VENDOR_MODULES: ReadonlyArray<{ specifier: string; file: string }> = [
  { specifier: "preact", file: "dist/preact.module.js" },
  { specifier: "preact/hooks", file: "hooks/dist/hooks.module.js" },
  { specifier: "preact/jsx-runtime", file: "jsx-runtime/dist/jsxRuntime.module.js" },
];

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".svg": "image/svg+xml",
};

/**
 * Reads the built page and the preact modules once, at start-up: a few dozen KB in memory, so a
 * request never touches the disk. Returns an empty map when the page was not built (a source
 * checkout before `npm run build`); the daemon then serves the API without the page.
 */
export async function loadDashboardAssets(webDirectory = WEB_DIRECTORY): Promise<DashboardAssets> {
  const assets = new Map<string, DashboardAsset>();
  let files: string[];
  try {
    files = await readdir(webDirectory, { recursive: true });
  } catch {
    return { files: assets, contentSecurityPolicy: contentSecurityPolicy("") };
  }
  for (const file of files.sort()) {
    const contentType = CONTENT_TYPES[path.extname(file)];
    if (contentType === undefined || file === "index.html") continue;
    const body = await readFile(path.join(webDirectory, file));
    assets.set(`/ui/${file.split(path.sep).join("/")}`, toAsset(body, contentType));
  }
  // Resolved from this package's dependencies, so an installed agentd serves its own copy.
  const preactDirectory = path.dirname(createRequire(import.meta.url).resolve("preact/package.json"));
  const imports: Record<string, string> = {};
  for (const { specifier, file } of VENDOR_MODULES) {
    const urlPath = `/ui/vendor/${path.basename(file)}`;
    assets.set(
      urlPath,
      toAsset(await readFile(path.join(preactDirectory, file)), CONTENT_TYPES[".js"] ?? ""),
    );
    imports[specifier] = urlPath;
  }
  const importMap = JSON.stringify({ imports });
  const page = await readFile(path.join(webDirectory, "index.html"), "utf8").catch(() => undefined);
  if (page !== undefined) {
    const html = page.replace("<!-- importmap -->", `<script type="importmap">${importMap}</script>`);
    assets.set("/", toAsset(Buffer.from(html), CONTENT_TYPES[".html"] ?? ""));
  }
  return { files: assets, contentSecurityPolicy: contentSecurityPolicy(importMap) };
}

/** No inline script but the import map, no other origin, no framing: an injected string cannot run. */
function contentSecurityPolicy(importMap: string): string {
  const importMapHash = createHash("sha256").update(importMap).digest("base64");
  return [
    "default-src 'none'",
    `script-src 'self' 'sha256-${importMapHash}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

function toAsset(body: Buffer, contentType: string): DashboardAsset {
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
  return { contentType, body, gzipped: gzipSync(body, { level: 9 }), etag };
}
