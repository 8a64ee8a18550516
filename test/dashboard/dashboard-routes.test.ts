import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentDetail, type ApiFixture, startApiFixture } from "../api/api-fixture.js";

// The page is served from dist/ (built by `npm run build`, which `npm test` runs first).
let fixture: ApiFixture;
beforeAll(async () => {
  fixture = await startApiFixture({ token: "dashboard-test-token" });
});
afterAll(() => fixture.close());

/** A raw GET (fetch would gunzip by itself and hide what was sent). */
function rawGet(
  urlPath: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(fixture.url);
    // A path as given, not normalised by a URL parser (for the "../" test).
    const outgoing = request({ hostname, port, path: urlPath, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
      );
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("the dashboard's files", () => {
  it("serves the page without a token, while the API behind it still needs one", async () => {
    const page = await rawGet("/");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    const html = page.body.toString("utf8");
    expect(html).toContain('<script type="module" src="/ui/main.js">');
    expect(html).not.toContain("dashboard-test-token");
    expect((await rawGet("/agents")).status).toBe(401);
  });

  it("allows only its own scripts and the import map it inlines (by hash), and no framing", async () => {
    const page = await rawGet("/");
    const html = page.body.toString("utf8");
    const importMap = /<script type="importmap">(.*?)<\/script>/.exec(html)?.[1] ?? "";
    expect(JSON.parse(importMap)).toEqual({
      imports: {
        preact: "/ui/vendor/preact.module.js",
        "preact/hooks": "/ui/vendor/hooks.module.js",
        "preact/jsx-runtime": "/ui/vendor/jsxRuntime.module.js",
      },
    });
    // Before the preload and the module script: a module resolved before the map fails on "preact".
    const mapAt = html.indexOf('<script type="importmap">');
    expect(mapAt).toBeLessThan(html.indexOf('rel="modulepreload"'));
    expect(mapAt).toBeLessThan(html.indexOf('<script type="module"'));
    const hash = createHash("sha256").update(importMap).digest("base64");
    const policy = String(page.headers["content-security-policy"]);
    expect(policy).toContain(`script-src 'self' 'sha256-${hash}'`);
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(page.headers["x-content-type-options"]).toBe("nosniff");
  });

  it("sends scripts gzipped to a browser that accepts it and answers 304 to a known ETag", async () => {
    const plain = await rawGet("/ui/vendor/preact.module.js");
    expect(plain.status).toBe(200);
    expect(plain.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    const zipped = await rawGet("/ui/vendor/preact.module.js", { "accept-encoding": "gzip, br" });
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    expect(zipped.body.length).toBeLessThan(plain.body.length);
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    const etag = String(plain.headers["etag"]);
    const again = await rawGet("/ui/vendor/preact.module.js", { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });

  it("answers 404 for a file it does not have, and keeps the page out of the OpenAPI document", async () => {
    const missing = await rawGet("/ui/../../package.json");
    expect(missing.status).toBe(404);
    expect((await rawGet("/ui/nothing.js")).status).toBe(404);
    const document = (await (await fixture.request("/openapi.json")).json()) as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(document.paths)).not.toContain("/");
    expect(Object.keys(document.paths).some((route) => route.startsWith("/ui"))).toBe(false);
  });

  it("answers GET /agents with an ETag and 304 while nothing changed", async () => {
    const first = await fixture.request("/agents");
    const etag = first.headers.get("etag") ?? "";
    expect(etag).not.toBe("");
    const second = await fixture.request("/agents", { headers: { "if-none-match": etag } });
    expect(second.status).toBe(304);
    const many = await startApiFixture({
      agents: Array.from({ length: 200 }, (_unused, index) => agentDetail(`agent-${index}`)),
    });
    try {
      const zipped = await fetch(`${many.url}/agents`, { headers: { "accept-encoding": "gzip" } });
      expect(zipped.headers.get("content-encoding")).toBe("gzip");
      expect(((await zipped.json()) as { agents: unknown[] }).agents).toHaveLength(200);
    } finally {
      await many.close();
    }
  });
});
