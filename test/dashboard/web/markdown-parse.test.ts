import { describe, expect, it } from "vitest";
import {
  type MarkdownBlock,
  parseInline,
  parseMarkdown,
  safeHref,
} from "../../../src/dashboard/web/markdown-parse.js";

/** Every string of a parsed tree, and every link target: what the page would put in the DOM. */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(strings);
  return [];
}

function hrefs(blocks: MarkdownBlock[]): string[] {
  const found: string[] = [];
  const walk = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === "object") {
      const node = value as Record<string, unknown>;
      if (node["kind"] === "link") found.push(String(node["href"]));
      Object.values(node).forEach(walk);
    }
  };
  walk(blocks);
  return found;
}

describe("parseMarkdown", () => {
  it("reads headings, paragraphs, lists, code, quotes and rules", () => {
    const blocks = parseMarkdown(
      [
        "# Weekly report",
        "",
        "Two **bold** and *quiet* words, `npm test` and a [link](https://example.com/a?b=1).",
        "",
        "- first",
        "- second with `code`",
        "",
        "3. three",
        "4. four",
        "",
        "```ts",
        "const a = 1 < 2;",
        "```",
        "",
        "> quoted",
        "",
        "---",
      ].join("\n"),
    );
    expect(blocks.map((block) => block.kind)).toEqual([
      "heading",
      "paragraph",
      "list",
      "list",
      "code",
      "quote",
      "rule",
    ]);
    expect(blocks[0]).toEqual({
      kind: "heading",
      level: 1,
      children: [{ kind: "text", text: "Weekly report" }],
    });
    expect(blocks[1]).toEqual({
      kind: "paragraph",
      children: [
        { kind: "text", text: "Two " },
        { kind: "strong", children: [{ kind: "text", text: "bold" }] },
        { kind: "text", text: " and " },
        { kind: "emphasis", children: [{ kind: "text", text: "quiet" }] },
        { kind: "text", text: " words, " },
        { kind: "code", text: "npm test" },
        { kind: "text", text: " and a " },
        { kind: "link", href: "https://example.com/a?b=1", children: [{ kind: "text", text: "link" }] },
        { kind: "text", text: "." },
      ],
    });
    expect(blocks[3]).toMatchObject({ kind: "list", ordered: true, start: 3 });
    expect(blocks[4]).toEqual({ kind: "code", language: "ts", text: "const a = 1 < 2;" });
  });

  it("leaves snake_case and dunder names alone and reads escapes", () => {
    expect(parseInline("a snake_case_name and \\*stars\\*")).toEqual([
      { kind: "text", text: "a snake_case_name and *stars*" },
    ]);
    expect(parseInline("window.__injected = 1 and window.__x")).toEqual([
      { kind: "text", text: "window.__injected = 1 and window.__x" },
    ]);
    expect(parseInline("__strong__ and _em_")).toEqual([
      { kind: "strong", children: [{ kind: "text", text: "strong" }] },
      { kind: "text", text: " and " },
      { kind: "emphasis", children: [{ kind: "text", text: "em" }] },
    ]);
  });
});

describe("Markdown from a model cannot inject markup or script", () => {
  const attacks = [
    '<img src=x onerror="alert(1)">',
    "<script>alert(1)</script>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click]( javascript:alert(1) )",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click](vbscript:msgbox(1))",
    "[click](//evil.example/x)",
    "[click](/relative)",
    '[x](https://ok.example/"onmouseover="alert(1))',
    '<a href="javascript:alert(1)">a</a>',
    "**<b onclick=alert(1)>bold</b>**",
    "```\n</code></pre><script>alert(1)</script>\n```",
  ];

  it.each(attacks)("%s stays text, with no link other than http(s)", (attack) => {
    const blocks = parseMarkdown(attack);
    for (const href of hrefs(blocks)) expect(href).toMatch(/^https?:\/\//);
    // Every piece of it is a string the page renders as a text node; the markup is still there as text.
    const text = strings(blocks).join("");
    if (attack.includes("<")) expect(text).toContain("<");
  });

  it("keeps links to http and https only", () => {
    expect(safeHref("https://example.com/x")).toBe("https://example.com/x");
    expect(safeHref("http://example.com")).toBe("http://example.com/");
    expect(safeHref("javascript:alert(1)")).toBeUndefined();
    expect(safeHref("  javascript:alert(1)")).toBeUndefined();
    expect(safeHref("java\tscript:alert(1)")).toBeUndefined();
    expect(safeHref("data:text/html,x")).toBeUndefined();
    expect(safeHref("/local")).toBeUndefined();
    expect(parseInline("see https://example.com/page.")).toEqual([
      { kind: "text", text: "see " },
      {
        kind: "link",
        href: "https://example.com/page",
        children: [{ kind: "text", text: "https://example.com/page" }],
      },
      { kind: "text", text: "." },
    ]);
  });

  it("reads text full of unclosed marks in linear time", () => {
    const text = `${"*".repeat(50_000)}${"`".repeat(50_000)}${"[".repeat(50_000)}_a`.repeat(1);
    // CPU time, not wall time: at load 30 on 2 cores the parse waited 4.7 s of wall time for a core.
    // A parser that backtracks over the unclosed marks would need minutes of CPU for this text.
    const before = process.cpuUsage();
    parseMarkdown(text);
    const used = process.cpuUsage(before);
    expect((used.user + used.system) / 1_000).toBeLessThan(3_000);
  });
});
