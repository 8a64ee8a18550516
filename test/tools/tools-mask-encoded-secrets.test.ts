import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolHarness } from "../support/tool-harness.js";

/** A value with a space, `@`, `/`, `+`, a quote and a character outside ASCII. */
const SECRET = 'p@ss wörd/+"x:Z9-long';
const bytes = Buffer.from(SECRET, "utf8");

let harness: ToolHarness;
let server: Server;
let base: string;

beforeAll(async () => {
  harness = new ToolHarness({
    permissions: { allow: ["shell", "http_request"] },
    secrets: { k: SECRET },
    // The echo server is on this machine's loopback, on a port chosen below.
    sandbox: { network: ["127.0.0.1"] },
  });
  // Answers with the request line as it arrived: the path as fetch percent-encoded it.
  server = createServer((request, response) => response.end(`you asked for ${request.url ?? ""}`));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  harness.dispose();
  await new Promise((resolve) => server.close(resolve));
});

/** The base64 characters that stand for the secret alone once `prefix` bytes precede it. */
function base64Core(prefix: string, encoding: "base64" | "base64url" = "base64"): string {
  const encoded = Buffer.concat([Buffer.from(prefix), bytes]).toString(encoding);
  return encoded.slice(
    Math.ceil((prefix.length * 8) / 6),
    Math.floor(((prefix.length + bytes.length) * 8) / 6),
  );
}

const PYTHON = (expression: string) =>
  `printf %s {{secret:k}} | python3 -c 'import sys, json, base64, urllib.parse; s = sys.stdin.read(); print(${expression})'`;

describe("a secret echoed by real programs in an encoding of their own", () => {
  it.each([
    ["as it is", "printf %s {{secret:k}}", SECRET],
    ["base64", "printf %s {{secret:k}} | base64 -w0", bytes.toString("base64")],
    ["base64 after one byte", "printf 'u%s' {{secret:k}} | base64 -w0", base64Core("u")],
    ["base64 after two bytes", "printf 'us%s' {{secret:k}} | base64 -w0", base64Core("us")],
    ["HTTP Basic authentication", "printf 'user:%s' {{secret:k}} | base64 -w0", base64Core("user:")],
    [
      "base64 wrapped at 76 columns across the value",
      "{ head -c 50 /dev/zero | tr '\\0' a; printf %s {{secret:k}}; } | base64",
      base64Core("a".repeat(50)),
    ],
    ["base64url", "printf 'ab%s' {{secret:k}} | basenc --base64url -w0", base64Core("ab", "base64url")],
    ["hex", PYTHON("s.encode().hex()"), bytes.toString("hex")],
    [
      "hex wrapped at 60 columns across the value (xxd -p)",
      "{ printf %s aaaaaaaaaaaaaaaaaaaa; printf %s {{secret:k}}; } | xxd -p",
      bytes.toString("hex").slice(0, 20),
    ],
    ["hex in capitals", PYTHON("s.encode().hex().upper()"), bytes.toString("hex").toUpperCase()],
    ["Python quote", PYTHON("urllib.parse.quote(s)"), "p%40ss%20w%C3%B6rd/%2B%22x%3AZ9-long"],
    ["Python quote_plus", PYTHON("urllib.parse.quote_plus(s)"), "p%40ss+w%C3%B6rd%2F%2B%22x%3AZ9-long"],
    ["JSON with \\u escapes", PYTHON("json.dumps(s)"), 'p@ss w\\u00f6rd/+\\"x:Z9-long'],
    ["JSON as JavaScript writes it", PYTHON("json.dumps(s, ensure_ascii=False)"), 'p@ss wörd/+\\"x:Z9-long'],
    [
      "a URL path as WHATWG URL writes it",
      `node -e 'console.log(new URL("http://h/" + process.argv[1]).pathname)' {{secret:k}}`,
      "p@ss%20w%C3%B6rd/+%22x:Z9-long",
    ],
    [
      "encodeURIComponent",
      `node -e 'console.log(encodeURIComponent(process.argv[1]))' {{secret:k}}`,
      encodeURIComponent(SECRET),
    ],
  ])("masks it %s", async (_form, command, leak) => {
    const result = await harness.call("shell", { command });

    expect(result).toMatchObject({ ok: true });
    expect(result.output).toContain("[secret:k]");
    expect(result.output).not.toContain(leak);
    expect(JSON.stringify(harness.events)).not.toContain(leak);
  });

  it("masks it in a URL path echoed by a server, as fetch encoded it", async () => {
    const result = await harness.call("http_request", { method: "GET", url: `${base}/x/{{secret:k}}` });

    expect(result.output).toContain("you asked for /x/[secret:k]");
    expect(result.output).not.toContain("p@ss%20w");
  });

  it("masks it in the http_request error message, which names the path", async () => {
    const result = await harness.call("http_request", {
      method: "GET",
      url: "http://127.0.0.1:1/x/{{secret:k}}",
    });

    expect(result).toMatchObject({ ok: false, code: "TOOL_FAILED" });
    expect(result.output).toContain("GET http://127.0.0.1:1/x/[secret:k] failed");
    expect(result.output).not.toContain("p@ss");
    expect(JSON.stringify(harness.events)).not.toContain("p@ss");
  });
});
