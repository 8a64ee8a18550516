import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

type ContentPart = CallToolResult["content"][number];

/**
 * What the model reads of a tool result: text parts as they are, joined by newlines; an embedded
 * text resource as its text; images, audio, blobs and links described in one bracketed line. A
 * result with only structured content is that content as JSON.
 */
export function mcpResultText(result: CallToolResult): string {
  if (result.content.length === 0 && result.structuredContent !== undefined) {
    return JSON.stringify(result.structuredContent);
  }
  return result.content.map(describePart).join("\n");
}

function describePart(part: ContentPart): string {
  switch (part.type) {
    case "text":
      return part.text;
    case "image":
      return `[image ${part.mimeType}, ${base64Bytes(part.data)} bytes]`;
    case "audio":
      return `[audio ${part.mimeType}, ${base64Bytes(part.data)} bytes]`;
    case "resource_link":
      return `[resource link ${part.uri}${part.name ? ` (${part.name})` : ""}]`;
    case "resource": {
      const { resource } = part;
      if ("text" in resource && typeof resource.text === "string") return resource.text;
      return `[resource ${resource.uri}${resource.mimeType ? ` ${resource.mimeType}` : ""}]`;
    }
    default:
      return `[${(part as { type: string }).type} content]`;
  }
}

function base64Bytes(data: string): number {
  return Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
}
