import { describe, expect, it } from "vitest";
import { MAX_FACT_CHARACTERS, boundedFacts } from "../../src/deliveries/bounded-facts.js";

describe("a delivery's facts", () => {
  it("are cut at the bound, never inside a character written with two UTF-16 units", () => {
    const result = `${"a".repeat(MAX_FACT_CHARACTERS - 1)}😀${"b".repeat(10)}`;
    const facts = boundedFacts({ agent: "a", run: "r_1", status: "completed", when: "always", result });
    expect(facts.result?.startsWith(`${"a".repeat(MAX_FACT_CHARACTERS - 1)}\n[agentd cut 12 more`)).toBe(
      true,
    );
    expect(JSON.stringify(facts)).not.toMatch(/\\ud83d/);
  });

  it("leaves texts within the bound, and other facts, as they are", () => {
    const facts = {
      agent: "a",
      run: "r_1",
      status: "failed",
      when: "failure" as const,
      error: "boom",
      cost_usd: 1,
    };
    expect(boundedFacts(facts)).toEqual(facts);
  });
});
