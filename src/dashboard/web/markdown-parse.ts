// A small Markdown reader for run results: headings, paragraphs, lists, fenced and indented code,
// block quotes, rules, and inline code, emphasis, strong and links. It builds a tree of plain text
// nodes and never HTML: what the page renders from it is escaped by preact, so a model's output
// cannot inject markup (`<img onerror>` stays text). A link keeps its target only for http(s).

/** A run of text with its inline marks. */
export type MarkdownInline =
  | { kind: "text"; text: string }
  | { kind: "code"; text: string }
  | { kind: "emphasis"; children: MarkdownInline[] }
  | { kind: "strong"; children: MarkdownInline[] }
  /** `href` is an http(s) URL; any other target leaves the link as its text. */
  | { kind: "link"; href: string; children: MarkdownInline[] };

export type MarkdownBlock =
  | { kind: "heading"; level: 1 | 2 | 3 | 4 | 5 | 6; children: MarkdownInline[] }
  | { kind: "paragraph"; children: MarkdownInline[] }
  | { kind: "code"; language: string; text: string }
  | { kind: "list"; ordered: boolean; start: number; items: MarkdownBlock[][] }
  | { kind: "quote"; children: MarkdownBlock[] }
  | { kind: "rule" };

/** How deep lists and quotes nest before the rest is shown as text: a bound on recursion. */
const MAX_DEPTH = 8;

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+\s*)?$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const BULLET = /^( {0,3})([-*+])\s+(.*)$/;
const ORDERED = /^( {0,3})(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;

/** Reads Markdown text into blocks. */
export function parseMarkdown(text: string, depth = 0): MarkdownBlock[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const blocks: MarkdownBlock[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] ?? "";
    if (line.trim() === "") {
      index += 1;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1] ?? "```";
      const body: string[] = [];
      index += 1;
      while (index < lines.length && !(lines[index] ?? "").trim().startsWith(marker)) {
        body.push(lines[index] ?? "");
        index += 1;
      }
      index += 1; // the closing fence (or the end)
      blocks.push({ kind: "code", language: fence[2] ?? "", text: body.join("\n") });
      continue;
    }
    if (/^( {4}|\t)/.test(line)) {
      const body: string[] = [];
      while (
        index < lines.length &&
        (/^( {4}|\t)/.test(lines[index] ?? "") || (lines[index] ?? "").trim() === "")
      ) {
        body.push((lines[index] ?? "").replace(/^( {4}|\t)/, ""));
        index += 1;
      }
      blocks.push({ kind: "code", language: "", text: body.join("\n").replace(/\n+$/, "") });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = (heading[1] ?? "#").length as 1 | 2 | 3 | 4 | 5 | 6;
      blocks.push({ kind: "heading", level, children: parseInline(heading[2] ?? "") });
      index += 1;
      continue;
    }
    if (RULE.test(line)) {
      blocks.push({ kind: "rule" });
      index += 1;
      continue;
    }
    if (QUOTE.test(line) && depth < MAX_DEPTH) {
      const body: string[] = [];
      while (index < lines.length && QUOTE.test(lines[index] ?? "")) {
        body.push(QUOTE.exec(lines[index] ?? "")?.[1] ?? "");
        index += 1;
      }
      blocks.push({ kind: "quote", children: parseMarkdown(body.join("\n"), depth + 1) });
      continue;
    }
    const listStart = BULLET.exec(line) ?? ORDERED.exec(line);
    if (listStart && depth < MAX_DEPTH) {
      const ordered = ORDERED.test(line);
      const pattern = ordered ? ORDERED : BULLET;
      const items: string[][] = [];
      while (index < lines.length) {
        const current = lines[index] ?? "";
        const item = pattern.exec(current);
        if (item) {
          items.push([item[3] ?? ""]);
        } else if (current.trim() === "") {
          // A blank line ends the list unless the next line goes on with it.
          const next = lines[index + 1] ?? "";
          if (!pattern.test(next) && !/^\s{2,}\S/.test(next)) break;
          items.at(-1)?.push("");
        } else if (/^\s{2,}\S/.test(current) || !isBlockStart(current)) {
          // An indented line, or a lazy continuation of the item's paragraph.
          items.at(-1)?.push(current.replace(/^\s{2,4}/, ""));
        } else {
          break;
        }
        index += 1;
      }
      blocks.push({
        kind: "list",
        ordered,
        start: ordered ? Number(ORDERED.exec(line)?.[2] ?? "1") : 1,
        items: items.map((item) => parseMarkdown(item.join("\n"), depth + 1)),
      });
      continue;
    }
    const paragraph: string[] = [];
    while (
      index < lines.length &&
      (lines[index] ?? "").trim() !== "" &&
      (paragraph.length === 0 || !isBlockStart(lines[index] ?? ""))
    ) {
      paragraph.push((lines[index] ?? "").trim());
      index += 1;
    }
    blocks.push({ kind: "paragraph", children: parseInline(paragraph.join("\n")) });
  }
  return blocks;
}

function isBlockStart(line: string): boolean {
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    BULLET.test(line) ||
    ORDERED.test(line)
  );
}

// Sticky patterns, tried at one position of the text; a span is at most 1,000 characters long,
// so text full of unclosed `*` or backticks is read in linear time, not quadratic.
const LINK = /\[([^\]\n]{0,1000})\]\(\s*<?([^\s)>]{0,2000})>?(?:\s+"[^"\n]{0,1000}")?\s*\)/y;
const STRONG = /(\*\*|__)(?=\S)([\s\S]{0,1000}?\S)\1/y;
const EMPHASIS = /(\*|_)(?=\S)([\s\S]{0,1000}?\S)\1(?![*_])/y;
const BARE_URL = /https?:\/\/[^\s<>()]{0,2000}[^\s<>().,;:!?'"]/y;
const ESCAPE = /\\([\\`*_[\]()#+\-.!>~|])/y;

/** The match of a sticky pattern at `index`, or null. */
function matchAt(pattern: RegExp, text: string, index: number): RegExpExecArray | null {
  pattern.lastIndex = index;
  return pattern.exec(text);
}

/** Reads inline marks: `code`, **strong**, *emphasis* / _emphasis_, [text](url), bare URLs. */
export function parseInline(text: string, depth = 0): MarkdownInline[] {
  const nodes: MarkdownInline[] = [];
  let plain = "";
  const flush = () => {
    if (plain !== "") nodes.push({ kind: "text", text: plain });
    plain = "";
  };
  let index = 0;
  while (index < text.length) {
    const character = text[index] ?? "";
    if (character === "`") {
      // A run of backticks opens a code span closed by a run of the same length, within 1,000
      // characters; without one the run is plain text, read at once.
      const run = runLength(text, index, "`");
      const close = closingRun(text, index + run, run);
      if (close === undefined) {
        plain += text.slice(index, index + run);
        index += run;
        continue;
      }
      flush();
      const body = text.slice(index + run, close);
      nodes.push({
        kind: "code",
        text: /^ .* $/s.test(body) && body.trim() !== "" ? body.slice(1, -1) : body,
      });
      index = close + run;
      continue;
    }
    if (depth < MAX_DEPTH) {
      const link = character === "[" ? matchAt(LINK, text, index) : null;
      if (link) {
        flush();
        const children = parseInline(link[1] ?? "", depth + 1);
        const href = safeHref(link[2] ?? "");
        if (href === undefined) nodes.push(...children);
        else nodes.push({ kind: "link", href, children });
        index += link[0].length;
        continue;
      }
      // `_` marks only at word edges: snake_case and __dunder__ names inside words are no emphasis.
      const marked = character === "*" || (character === "_" && !endsInWord(plain));
      const strong = marked ? atWordEdge(matchAt(STRONG, text, index), text) : null;
      if (strong) {
        flush();
        nodes.push({ kind: "strong", children: parseInline(strong[2] ?? "", depth + 1) });
        index += strong[0].length;
        continue;
      }
      // `_` inside a word (snake_case) is no emphasis.
      const emphasis = marked ? atWordEdge(matchAt(EMPHASIS, text, index), text) : null;
      if (emphasis) {
        flush();
        nodes.push({ kind: "emphasis", children: parseInline(emphasis[2] ?? "", depth + 1) });
        index += emphasis[0].length;
        continue;
      }
      if (character === "*" || character === "_") {
        // No span opens here: the whole run of marks is text (`****…` is not tried at each mark).
        const run = runLength(text, index, character);
        plain += text.slice(index, index + run);
        index += run;
        continue;
      }
      const bare = character === "h" && !endsInWord(plain) ? matchAt(BARE_URL, text, index) : null;
      const bareHref = bare ? safeHref(bare[0]) : undefined;
      if (bare && bareHref !== undefined) {
        flush();
        nodes.push({ kind: "link", href: bareHref, children: [{ kind: "text", text: bare[0] }] });
        index += bare[0].length;
        continue;
      }
    }
    const escaped = character === "\\" ? matchAt(ESCAPE, text, index) : null;
    if (escaped) {
      plain += escaped[1];
      index += 2;
      continue;
    }
    plain += character;
    index += 1;
  }
  flush();
  return nodes;
}

/** How many times `character` repeats from `index`. */
function runLength(text: string, index: number, character: string): number {
  let end = index;
  while (text[end] === character) end += 1;
  return end - index;
}

/** Where a run of exactly `length` backticks starts within 1,000 characters of `from`, if any. */
function closingRun(text: string, from: number, length: number): number | undefined {
  const limit = Math.min(text.length, from + 1_000);
  let index = text.indexOf("`", from);
  while (index !== -1 && index < limit) {
    const run = runLength(text, index, "`");
    if (run === length && index > from) return index;
    index = text.indexOf("`", index + run);
  }
  return undefined;
}

/** A `_` span that ends inside a word (`__init__x`) is none; `*` spans may. */
function atWordEdge(match: RegExpExecArray | null, text: string): RegExpExecArray | null {
  if (match === null || !match[0].startsWith("_")) return match;
  const after = text[match.index + match[0].length] ?? "";
  return /\w/.test(after) ? null : match;
}

function endsInWord(text: string): boolean {
  return /\w/.test(text.at(-1) ?? "");
}

/** The URL when it is absolute http or https (no credentials hidden in it), else undefined. */
export function safeHref(target: string): string | undefined {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  return url.href;
}
