import { describe, expect, it } from "vitest";
import { internalAddressClass } from "../../src/sandbox/address-class.js";

describe("internalAddressClass", () => {
  it.each([
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["0.1.2.3", "this-network"],
    ["127.0.0.2", "loopback"],
    ["255.255.255.255", "broadcast"],
    ["224.0.0.1", "multicast"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fd00::1", "unique local"],
    ["fc12::1", "unique local"],
    ["fe80::1%eth0", "link-local"],
    ["fe80::1", "link-local"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["[::ffff:127.0.0.1]", "loopback"],
    ["64:ff9b::a9fe:a9fe", "link-local"],
    ["::a00:1", "IPv4-compatible"],
    ["ff02::1", "multicast"],
  ])("calls %s internal (%s)", (address, kind) => {
    expect(internalAddressClass(address)).toContain(kind);
  });

  it.each(["8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "example.com"])(
    "calls %s public (or not an address)",
    (address) => {
      expect(internalAddressClass(address)).toBeUndefined();
    },
  );
});
