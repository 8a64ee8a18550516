import { describe, expect, it } from "vitest";
import { isLoopbackHost } from "../../src/util/loopback-host.js";

describe("isLoopbackHost", () => {
  it.each([
    "localhost",
    "LOCALHOST.",
    "127.0.0.1",
    "127.1",
    "0x7f.1",
    "2130706433",
    "::1",
    "[::1]",
    "0:0:0:0:0:0:0:1",
    "::ffff:127.0.0.1",
  ])("%s is loopback", (host) => expect(isLoopbackHost(host)).toBe(true));
  it.each([
    "10.0.0.1",
    "0.0.0.0",
    "::",
    "evil.com",
    "localhost.evil.com",
    "127.0.0.1.nip.io",
    "a b",
    "x:80",
    "",
  ])("%s is not", (host) => expect(isLoopbackHost(host)).toBe(false));
});
