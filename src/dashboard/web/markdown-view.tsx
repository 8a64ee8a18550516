// Renders parsed Markdown as preact elements: every string is a text node, which preact escapes,
// and no element gets raw HTML. Links open in a new tab without the page's referrer or opener.

import type { ComponentChildren } from "preact";
import { useMemo } from "preact/hooks";
import { type MarkdownBlock, type MarkdownInline, parseMarkdown } from "./markdown-parse.js";

/** Results longer than this are shown as plain text: the reader stays quick on huge outputs. */
const MAX_MARKDOWN_CHARACTERS = 200_000;

/** A run's result, or any model-written text, as Markdown. */
export function MarkdownText({ text, class: className }: { text: string; class?: string }) {
  const blocks = useMemo(
    () => (text.length > MAX_MARKDOWN_CHARACTERS ? undefined : parseMarkdown(text)),
    [text],
  );
  if (blocks === undefined) return <pre class={className}>{text}</pre>;
  return <div class={`markdown ${className ?? ""}`}>{blocks.map(renderBlock)}</div>;
}

function renderBlock(block: MarkdownBlock, index: number): ComponentChildren {
  switch (block.kind) {
    case "heading": {
      // One level below the page's own headings: h3 at most.
      const Tag = `h${Math.min(6, block.level + 2)}` as "h3";
      return <Tag key={index}>{block.children.map(renderInline)}</Tag>;
    }
    case "paragraph":
      return <p key={index}>{block.children.map(renderInline)}</p>;
    case "code":
      return (
        <pre key={index} class="code" data-language={block.language || undefined}>
          <code>{block.text}</code>
        </pre>
      );
    case "list": {
      const items = block.items.map((item, itemIndex) => <li key={itemIndex}>{item.map(renderBlock)}</li>);
      return block.ordered ? (
        <ol key={index} start={block.start}>
          {items}
        </ol>
      ) : (
        <ul key={index}>{items}</ul>
      );
    }
    case "quote":
      return <blockquote key={index}>{block.children.map(renderBlock)}</blockquote>;
    case "rule":
      return <hr key={index} />;
  }
}

function renderInline(node: MarkdownInline, index: number): ComponentChildren {
  switch (node.kind) {
    case "text":
      return node.text;
    case "code":
      return <code key={index}>{node.text}</code>;
    case "emphasis":
      return <em key={index}>{node.children.map(renderInline)}</em>;
    case "strong":
      return <strong key={index}>{node.children.map(renderInline)}</strong>;
    case "link":
      return (
        <a key={index} href={node.href} target="_blank" rel="noopener noreferrer nofollow">
          {node.children.map(renderInline)}
        </a>
      );
  }
}
