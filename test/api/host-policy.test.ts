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
});
