/**
 * `{{name}}` in a trigger's task template. `{{secret:…}}` is not a trigger variable: it is left as
 * written (a secret template, substituted only in tool calls, never in a task).
 */
const VARIABLE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const SECRET_REFERENCE = /^secret:/;

/** The kinds of trigger, each with the variables its template may name. */
export type TriggerKind = "webhook" | "after" | "watch";

/** A payload path: `payload`, `payload.pull_request.html_url`, `payload.commits.0.id`. */
const PAYLOAD_PATH = /^payload(?:\.[A-Za-z0-9_-]+)*$/;

const VARIABLES: Record<TriggerKind, readonly string[]> = {
  webhook: ["payload_file", "delivery", "trigger"],
  after: [
    "upstream.result",
    "upstream.id",
    "upstream.status",
    "upstream.reason",
    "upstream.agent",
    "trigger",
  ],
  watch: ["paths", "folder", "trigger"],
};

/** The longest text one variable inserts into a task; the whole payload is in its file. */
export const MAX_INSERTED_CHARACTERS = 16_384;

/** The variables `kind`'s templates may name, for messages. */
export function variablesOf(kind: TriggerKind): string[] {
  return kind === "webhook" ? ["payload.<path>", ...VARIABLES.webhook] : [...VARIABLES[kind]];
}

/** The variables a template names that `kind` does not know (each once, in order). */
export function unknownVariables(template: string, kind: TriggerKind): string[] {
  const unknown = new Set<string>();
  for (const [, name = ""] of template.matchAll(VARIABLE)) {
    if (SECRET_REFERENCE.test(name)) continue;
    const known = VARIABLES[kind].includes(name) || (kind === "webhook" && PAYLOAD_PATH.test(name));
    if (!known) unknown.add(name);
  }
  return [...unknown];
}

/**
 * Fills a template in one pass: each `{{name}}` becomes `lookup(name)` (undefined: empty), text
 * that is not a variable stays as written. What a sender controls never becomes template syntax:
 * the inserted text is not read again, and `{{` / `}}` in it are written `{ {` / `} }`, so a
 * payload cannot name a variable, nor a `{{secret:…}}` a model would later copy into a tool call.
 */
export function renderTaskTemplate(
  template: string,
  lookup: (name: string) => unknown,
  redact: (text: string) => string = (text) => text,
): string {
  return template.replace(VARIABLE, (whole, name: string) => {
    if (SECRET_REFERENCE.test(name)) return whole;
    return insertable(lookup(name), redact);
  });
}

/**
 * A value as task text: strings as they are, anything else as JSON; defused and bounded. A value
 * longer than the bound is masked (`redact`, the vault's redactor) before it is cut: the task is
 * masked again as a whole, too late for a secret the cut leaves in part.
 */
export function insertable(value: unknown, redact: (text: string) => string = (text) => text): string {
  if (value === undefined || value === null) return "";
  let text: string;
  if (typeof value === "string") text = value;
  else {
    try {
      text = JSON.stringify(value) ?? "";
    } catch {
      // A payload nested past what JSON.stringify walks: its file has it whole.
      text = "[too deeply nested to show here]";
    }
  }
  if (text.length > MAX_INSERTED_CHARACTERS) text = redact(text);
  if (text.length > MAX_INSERTED_CHARACTERS) {
    text = `${text.slice(0, MAX_INSERTED_CHARACTERS)}… [cut at ${MAX_INSERTED_CHARACTERS} characters]`;
  }
  return defused(text);
}

/** `{{` and `}}` broken apart, repeatedly, so no run of braces stays a template. */
function defused(text: string): string {
  let previous: string;
  let current = text;
  do {
    previous = current;
    current = current.replaceAll("{{", "{ {").replaceAll("}}", "} }");
  } while (current !== previous);
  return current;
}

/** The value at a dotted path of a payload (own properties only: no `__proto__`, no `constructor`). */
export function valueAt(root: unknown, dottedPath: readonly string[]): unknown {
  let value = root;
  for (const key of dottedPath) {
    if (value === null || typeof value !== "object") return undefined;
    if (!Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
