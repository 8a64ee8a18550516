import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProxyUnderTest, startProxyUnderTest } from "./proxy-under-test.js";

// The built proxy (dist/) in a child process: `npm run build` first.
let proxy: ProxyUnderTest;
beforeAll(async () => {
  proxy = await startProxyUnderTest(["api.example.com"], {});
});
afterAll(async () => {
  await proxy.stop();
});

/** The status line of the proxy's answer to `request`. */
async function statusLine(request: string): Promise<string> {
  const { reply } = await proxy.exchange([Buffer.from(request, "latin1")]);
  return reply.split("\r\n")[0] ?? "";
}

describe("a host the sandbox's network list leaves out", () => {
  // npm shows only the status line of a refused CONNECT ("403 <phrase> - GET <url>"), followed by
  // a text about security policies: the phrase is where the cause can be named.
  it("is refused with a status line that names the host and the list", async () => {
    expect(
      await statusLine("CONNECT registry.npmjs.org:443 HTTP/1.1\r\nhost: registry.npmjs.org:443\r\n\r\n"),
    ).toBe(
      "HTTP/1.1 403 Forbidden by the agentd sandbox: registry.npmjs.org:443 is not in the sandbox's network list",
    );
    expect(
      await statusLine("GET http://registry.npmjs.org/x HTTP/1.1\r\nhost: registry.npmjs.org\r\n\r\n"),
    ).toMatch(
      /^HTTP\/1\.1 403 Forbidden by the agentd sandbox: registry\.npmjs\.org:80 is not in the sandbox's network list$/,
    );
  });

  it("keeps the status line one line of printable text whatever the request held", async () => {
    const { reply } = await proxy.exchange([
      Buffer.from("CONNECT b\u00e4d\u0007.example:443 HTTP/1.1\r\nhost: x\r\n\r\n", "latin1"),
    ]);
    const [line, next] = reply.split("\r\n");
    expect(line).toMatch(/^HTTP\/1\.1 4\d\d [\x20-\x7e]+$/);
    expect(line?.length).toBeLessThan(240);
    expect(next).toMatch(/^[a-z-]+: /);
  });
});
