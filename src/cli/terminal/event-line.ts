import { stripVTControlCharacters } from "node:util";
import { hintOfCode } from "../../errors/error-hints.js";
import { terminalSafeText } from "../../util/terminal-safe-text.js";
import type { Style } from "./terminal-style.js";
import { paint } from "./terminal-style.js";

/** Longest part of a tool output, argument list or result shown on one line. */
const PREVIEW_CHARACTERS = 160;
/** The type column's width: the longest event type, `observation`. */
const TYPE_WIDTH = 11;

/**
 * An event as the CLI shows it: a typed event of an in-process run, or one served by a daemon
 * (possibly of another version, so `data` is read field by field and a missing field shows empty).
 */
export interface ShownEvent {
  id: number;
  run: string | null;
  type: string;
  time: string;
  data: unknown;
}

export interface EventLineOptions {
  color: boolean;
  /** Leads with the event id and the run: for a feed that mixes runs (`agentd events`). */
  cursor: boolean;
}

/**
 * The one text form of an event, shared by `agentd run` and `agentd events`:
 * `[#12 r_… ]09:41:25 action      shell {"command":"ls"}`. A thought keeps its lines, indented under
 * the first; everything else is one line, long parts cut with `…`.
 */
export function formatEventLine(event: ShownEvent, options: EventLineOptions): string {
  const { style, text: described } = describeEvent(event);
  // The text is the agent's (tool outputs, the model's words): shown, never obeyed by the terminal.
  const text = terminalSafeText(described);
  const time = paint(options.color, "dim", event.time.slice(11, 19));
  const type = paint(options.color, style, event.type.padEnd(TYPE_WIDTH));
  const lead = options.cursor ? `#${event.id} ${time} ${event.run ?? "-"} ` : `${time} `;
  const indent = " ".repeat(stripVTControlCharacters(lead).length + TYPE_WIDTH + 1);
  return `${lead}${type} ${text.replace(/\n/g, `\n${indent}`)}`;
}

function describeEvent(event: ShownEvent): { style: Style; text: string } {
  const field = (key: string) => fieldText(event.data, key);
  switch (event.type) {
    case "status":
      return { style: "cyan", text: joined(field("status"), field("reason"), field("message")) };
    case "thought":
      return { style: "magenta", text: field("text").trim() };
    case "action":
      return { style: "blue", text: `${field("tool")} ${preview(field("arguments") || "{}")}` };
    case "observation": {
      const ok = fieldOf(event.data, "ok") === true;
      const duration = field("duration_ms");
      return {
        style: ok ? "green" : "red",
        text: `${ok ? "✓" : "✗"} ${field("tool")} (${duration || "?"} ms) ${preview(field("output"))}`,
      };
    }
    case "error": {
      // A retry is not yet the user's to fix; a final error says what to do.
      const hint =
        fieldOf(event.data, "retryable") === true ? undefined : field("hint") || hintOfCode(field("code"));
      return { style: "red", text: `${field("code")}: ${field("message")}${hint ? ` — ${hint}` : ""}` };
    }
    case "warning":
      return { style: "yellow", text: `${field("code")}: ${field("message")}` };
    case "fallback":
      return { style: "yellow", text: `${field("from")} → ${field("to")}: ${field("message")}` };
    case "compaction":
      return {
        style: "yellow",
        text: `${field("method")}: ${field("messages_before")} → ${field("messages_after")} messages, ~${field("tokens_before")} → ~${field("tokens_after")} tokens`,
      };
    case "approval":
      return { style: "yellow", text: `${field("state")} ${field("tool")} (approval ${field("id")})` };
    case "question":
      return {
        style: "yellow",
        text: `${field("state")} (question ${field("id")}) ${field("answer") || field("question")}`,
      };
    case "hook": {
      const outcome = field("outcome");
      return {
        style: outcome === "ok" ? "dim" : outcome === "denied" ? "yellow" : "red",
        text: joined(
          field("hook"),
          outcome,
          field("tool"),
          preview(field("command")),
          preview(field("message")),
        ),
      };
    }
    case "result": {
      const tokens = fieldText(fieldOf(event.data, "usage"), "total_tokens");
      const cost = Number(fieldOf(event.data, "cost_usd") ?? 0).toFixed(4);
      return {
        style: "green",
        text: `${preview(field("text"))} [${tokens ? `${tokens} tokens, ` : ""}$${cost}]`,
      };
    }
    default:
      return { style: "dim", text: preview(JSON.stringify(event.data ?? {})) };
  }
}

function fieldOf(data: unknown, key: string): unknown {
  return typeof data === "object" && data !== null ? (data as Record<string, unknown>)[key] : undefined;
}

/** A field as text: strings as they are, anything else as JSON, absent as "". */
function fieldText(data: unknown, key: string): string {
  const value = fieldOf(data, key);
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function joined(...parts: string[]): string {
  return parts.filter((part) => part !== "").join(" · ");
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > PREVIEW_CHARACTERS ? `${flat.slice(0, PREVIEW_CHARACTERS)}…` : flat;
}
