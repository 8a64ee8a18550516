import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProxyUnderTest, startProxyUnderTest } from "./proxy-under-test.js";

// The built proxy (dist/) under bubblewrap, resolving names with an /etc/hosts of this test's: a
// name under an allowed wildcard that answers an internal address is what a DNS-rebinding
// attacker controls. `npm run build` first.
const ETC_HOSTS = [
  "169.254.169.254 meta.rebind.test",
  "10.1.2.3 lan.rebind.test",
  "172.20.0.5 docker.rebind.test",
  "192.168.1.1 router.rebind.test",
  "100.64.0.1 cgnat.rebind.test",
  "0.0.0.7 zero.rebind.test",
  "224.0.0.251 multicast.rebind.test",
  "::ffff:192.168.1.1 mapped.rebind.test",
  "fd00::1 ula.rebind.test",
  "fe80::1 linklocal6.rebind.test",
  "127.0.0.1 loop.rebind.test",
  "8.8.8.8 mixed.rebind.test",
  "10.0.0.1 mixed.rebind.test",
  "",
].join("\n");
const LIMITS = { connectTimeoutMilliseconds: 300 };
let refusing: ProxyUnderTest;
let allowing: ProxyUnderTest;

beforeAll(async () => {
  [refusing, allowing] = await Promise.all([
    startProxyUnderTest(["*.rebind.test", "10.255.255.1:9", "*.1"], LIMITS, { etcHosts: ETC_HOSTS }),
    startProxyUnderTest(["*.rebind.test"], LIMITS, { etcHosts: ETC_HOSTS, privateAddresses: true }),
  ]);
});
afterAll(async () => {
  await Promise.all([refusing.stop(), allowing.stop()]);
});

const connect = (authority: string) =>
  Buffer.from(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
const get = (url: string) => Buffer.from(`GET ${url} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
const statusOf = (reply: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1]);

describe("an allowed name that resolves to an internal address", () => {
  it.each([
    ["meta.rebind.test", "link-local"],
    ["lan.rebind.test", "private (RFC 1918"],
    ["docker.rebind.test", "private (RFC 1918"],
    ["router.rebind.test", "private (RFC 1918"],
    ["cgnat.rebind.test", "carrier-grade NAT"],
    ["zero.rebind.test", "this-network"],
    ["multicast.rebind.test", "multicast"],
    ["mapped.rebind.test", "private (RFC 1918"],
    ["ula.rebind.test", "unique local"],
    ["linklocal6.rebind.test", "link-local"],
    ["mixed.rebind.test", "private (RFC 1918"],
    ["loop.rebind.test", "loopback"],
  ])("is refused with a 403 naming its class: CONNECT %s", async (name, kind) => {
    const { reply } = await refusing.exchange([connect(`${name}:80`)]);
    expect(statusOf(reply)).toBe(403);
    expect(reply).toContain(kind);
    expect(reply).toContain(kind === "loopback" ? "list the loopback address" : "sandbox.private_addresses");
  });

  it("is refused for a forwarded http:// request too", async () => {
    const { reply } = await refusing.exchange([get("http://meta.rebind.test/latest/meta-data/")]);
    expect(statusOf(reply)).toBe(403);
    expect(reply).toMatch(/169\.254\.169\.254.*link-local/);
  });

  it("lets an internal IP address listed as written through", async () => {
    const { reply } = await refusing.exchange([connect("10.255.255.1:9")]);
    expect(statusOf(reply)).not.toBe(403);
  });

  it("does not let a wildcard match an IP address", async () => {
    const { reply } = await refusing.exchange([connect("10.0.0.1:80")]);
    expect(statusOf(reply)).toBe(403);
    expect(reply).toContain("is not in the sandbox's network list");
  });

  it("is let through with private_addresses: allow, loopback still refused", async () => {
    const [lan, loop] = await Promise.all([
      allowing.exchange([connect("lan.rebind.test:9")]),
      allowing.exchange([connect("loop.rebind.test:80")]),
    ]);
    expect(statusOf(lan.reply)).not.toBe(403);
    expect(statusOf(loop.reply)).toBe(403);
    expect(loop.reply).toContain("loopback");
  });
});
