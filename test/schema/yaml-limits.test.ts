import { describe, expect, it } from "vitest";
import { parseLocatedYaml } from "../../src/schema/yaml-document.js";
import { findExcessiveNesting } from "../../src/schema/yaml-limits.js";

describe("YAML limits", () => {
  it("lets ordinary definitions through: quotes, brackets in text, nested lists", () => {
    const text = [
      "name: x",
      "description: don't stop [here",
      "limits:",
      "  timeout: 5m",
      "  list: [a, {b: [c]}]",
      'quoted: "[[[[[[" # [[[[',
      "tools:",
      "  - - - a",
    ].join("\n");
    expect(findExcessiveNesting(text)).toBeUndefined();
    expect(parseLocatedYaml(text).syntaxError).toBeUndefined();
  });

  it("finds flow, compact and indented nesting past the limit, with the line", () => {
    expect(findExcessiveNesting(`a: 1\nb: ${"[".repeat(300_000)}`)).toMatchObject({ line: 2 });
    expect(findExcessiveNesting(`a: 1\nb:\n${"- ".repeat(100)}x`)).toMatchObject({ line: 3 });
    const indented = Array.from({ length: 100 }, (_, index) => `${" ".repeat(index)}k${index}:`).join("\n");
    expect(findExcessiveNesting(indented)?.line).toBe(65);
  });

  it("reports a deep document and an alias bomb as syntax errors with a line, without parsing them", () => {
    const deep = parseLocatedYaml(`description: x\nbomb: ${"[".repeat(500_000)}${"]".repeat(500_000)}\n`, 1);
    expect(deep.syntaxError).toMatchObject({ line: 3 });
    expect(deep.syntaxError?.message).toMatch(/nest/);

    const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let level = 1; level < 10; level += 1) {
      lines.push(
        `${String.fromCharCode(97 + level)}: &${String.fromCharCode(97 + level)} [${Array(10)
          .fill(`*${String.fromCharCode(96 + level)}`)
          .join(", ")}]`,
      );
    }
    const bomb = parseLocatedYaml(lines.join("\n"));
    expect(bomb.syntaxError?.message).toMatch(/alias/);
    expect(bomb.syntaxError?.line).toBe(2);
  });

  it("refuses a file of too many keys before parsing it, with the line, and still finds a repeated key", () => {
    const keys = (count: number) =>
      Array.from({ length: count }, (_, index) => `k${index}: ${index}`).join("\n");
    expect(parseLocatedYaml(keys(9_000)).syntaxError).toBeUndefined();
    const crowded = parseLocatedYaml(keys(60_000), 1);
    expect(crowded.syntaxError?.message).toMatch(/more than 10000 entries/);
    expect(crowded.syntaxError?.line).toBe(10_002);
    const flow = parseLocatedYaml(
      `a: {${Array.from({ length: 20_000 }, (_, index) => `k${index}: 1`).join(", ")}}`,
    );
    expect(flow.syntaxError?.message).toMatch(/entries/);
    const repeated = parseLocatedYaml(`${keys(5_000)}\nk17: again\n`);
    expect(repeated.syntaxError).toEqual({ message: "Map keys must be unique", line: 5_001 });
    const nested = parseLocatedYaml("a:\n  b: 1\n  c: 2\n  b: 3\nd: 4\n");
    expect(nested.syntaxError).toEqual({ message: "Map keys must be unique", line: 4 });
  });
});
