import { describe, expect, it } from "vitest";
import { createRunIdSource } from "../../src/runs/run-id.js";

describe("createRunIdSource", () => {
  it("gives ids in creation order, all different, across many draws of random bytes", () => {
    const time = new Date("2026-01-01T00:00:00.000Z");
    const next = createRunIdSource(() => time);
    const ids = Array.from({ length: 1_000 }, () => next());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(/^r_[0-9a-z]{21}$/);
    // Two sources (two daemons) draw their own random parts.
    const other = createRunIdSource(() => time);
    expect(other().slice(-8)).not.toBe(ids[0]?.slice(-8));
  });
});
