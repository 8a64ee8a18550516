import { describe, expect, it } from "vitest";
import { createHostPolicy } from "../../src/api/host-policy.js";

describe("createHostPolicy", () => {
  it("gives a Host header seen before the same answer, however many others came between", () => {
    const allowed = createHostPolicy({ bindHost: "127.0.0.1", allowedHosts: ["agentd.example"] });
    for (let pass = 0; pass < 2; pass++) {
      expect(allowed("localhost:8080")).toBe(true);
      expect(allowed("AGENTD.example.")).toBe(true);
      expect(allowed("rebound.example")).toBe(false);
      expect(allowed("user@localhost")).toBe(false);
    }
    for (let index = 0; index < 200; index++) expect(allowed(`rebound-${index}.example`)).toBe(false);
    expect(allowed("localhost:8080")).toBe(true);
    expect(allowed("rebound.example")).toBe(false);
  });

  it("accepts the wildcard bind address as Host when bound to it, as the docs say", () => {
    for (const bindHost of ["0.0.0.0", "::"]) {
      const allowed = createHostPolicy({ bindHost, allowedHosts: [] });
      expect(allowed("0.0.0.0:7070")).toBe(true);
      expect(allowed("[::]:7070")).toBe(true);
      expect(allowed("[0:0::0]")).toBe(true);
      expect(allowed("rebound.example:7070")).toBe(false);
    }
    const loopbackOnly = createHostPolicy({ bindHost: "127.0.0.1", allowedHosts: [] });
    expect(loopbackOnly("0.0.0.0:7070")).toBe(false);
    expect(loopbackOnly("127.0.0.1:7070")).toBe(true);
  });
});
