import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const DOCS = path.resolve(import.meta.dirname, "../../docs");

/**
 * A ratio as the docs write one: `1.23×`, `0.66–0.70x`, `4x` (not `0x1f`, `4x4`, `x86`, nor a
 * printf format such as `%08x`).
 */
const RATIO = /(?<![\w.%])\d+(?:\.\d+)?(?:[–-]\d+(?:\.\d+)?)?\s?[×x](?!\w)/g;

/**
 * A page's paragraphs (blocks between blank lines); a fenced code block (a bench's printed lines)
 * belongs to the paragraph before it.
 */
function paragraphs(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let inFence = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) {
      if (!inFence && current.length === 0 && blocks.length > 0) current = [blocks.pop() ?? ""];
      inFence = !inFence;
      current.push(line);
    } else if (!inFence && line.trim() === "") {
      if (current.length > 0) blocks.push(current.join("\n"));
      current = [];
    } else current.push(line);
  }
  if (current.length > 0) blocks.push(current.join("\n"));
  return blocks;
}

describe("figures quoted in the docs", () => {
  it("sit in a paragraph that links to docs/benchmarks.md, where the benches print them", () => {
    const unlinked = readdirSync(DOCS)
      .filter((name) => name.endsWith(".md") && name !== "benchmarks.md")
      .flatMap((name) =>
        paragraphs(readFileSync(path.join(DOCS, name), "utf8"))
          .filter((block) => block.match(RATIO) !== null && !block.includes("benchmarks.md"))
          .map((block) => `${name}: ${(block.match(RATIO) ?? []).join(" ")} in "${block.slice(0, 80)}…"`),
      );
    expect(unlinked).toEqual([]);
  });

  it("reads a ratio and leaves alone what only looks like one", () => {
    const found = (text: string) => text.match(RATIO) ?? [];
    expect(found("costs 1.23× a bare route, 0.66–0.70x before, 4x more")).toEqual([
      "1.23×",
      "0.66–0.70x",
      "4x",
    ]);
    expect(found("0x1f, a 4x4 grid, x86_64, v1.2x, hexdump -e '/4 \"%08x \"'")).toEqual([]);
    expect(paragraphs("a 1.2x\n\n```\nratio 1.0x\n```\n\nnext")).toEqual([
      "a 1.2x\n```\nratio 1.0x\n```",
      "next",
    ]);
  });
});
