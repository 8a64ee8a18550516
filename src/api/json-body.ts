import { AgentdError } from "../errors/agentd-error.js";

/** Only whitespace as JSON defines it: a body of nothing else is no body. */
const JSON_WHITESPACE = /^[ \t\r\n]*$/;

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Parses a request's JSON body. An empty body (or JSON whitespace only) is no body: POST
 * /runs/:run/stop and friends carry none. Anything else must be UTF-8 JSON whose top level is an
 * object, as every body the API takes is: `null`, an array, a string or a number would otherwise
 * read as "no body" and start a run with the default task. A `__proto__` key anywhere is refused:
 * merged into an object it would change that object's prototype. Failures are BAD_REQUEST errors
 * the API answers with its usual body.
 */
export function parseJsonBody(body: Buffer | string): unknown {
  const text = typeof body === "string" ? body : decodeUtf8(body);
  if (JSON_WHITESPACE.test(text)) return undefined;
  let value: unknown;
  try {
    value = mayNamePrototype(text) ? JSON.parse(text, refusePrototypeKey) : JSON.parse(text);
  } catch (error) {
    if (error instanceof AgentdError) throw error;
    throw new AgentdError(
      "BAD_REQUEST",
      `the body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      { hint: "send a JSON object with content-type: application/json", cause: error },
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new AgentdError("BAD_REQUEST", `the body must be a JSON object, not ${kindOf(value)}`, {
      field: "body",
      hint: 'send a JSON object such as {} or {"task": "…"}, or no body at all',
    });
  }
  return value;
}

function decodeUtf8(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch (error) {
    throw new AgentdError("BAD_REQUEST", "the body is not valid UTF-8", {
      field: "body",
      hint: "send JSON encoded as UTF-8",
      cause: error,
    });
  }
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/**
 * Whether a key of `text` could be `__proto__`: spelled out, or written with `\u` escapes (the only
 * escapes that make a letter or `_`). Most bodies are neither, and skip the reviver, which visits
 * every value of the body.
 */
function mayNamePrototype(text: string): boolean {
  return text.includes("__proto__") || text.includes("\\u");
}

function refusePrototypeKey(key: string, value: unknown): unknown {
  if (key === "__proto__") {
    throw new AgentdError("BAD_REQUEST", 'the body has a "__proto__" key, which the API refuses', {
      field: "__proto__",
      hint: "remove the key: no request field is named __proto__",
    });
  }
  return value;
}
