import type { EventDraft } from "../events/agent-event.js";
import { secretForms } from "./secret-encodings.js";
import { visitStrings } from "./secret-template.js";

/** Values shorter than this are not redacted: masking every "abc" would wreck all output. */
export const MIN_REDACTED_LENGTH = 4;

/**
 * Lines of base64 as `base64`, MIME and PEM wrap them (76 or 64 columns): a value's encoding may
 * straddle a line break, so the lines are also looked at joined.
 */
const WRAPPED_BASE64 = /(?:[A-Za-z0-9+/]{16,}={0,2}\r?\n)+[A-Za-z0-9+/]*={0,2}/g;

/**
 * Knows every secret value loaded so far and replaces each occurrence (in any of the encodings
 * of {@link secretForms}, base64 also across wrapped lines) with `[secret:name]`. One instance serves the tool executor, the event bus
 * (`redactEvent`) and the logger (`redactText`), so a value cannot leak through any of them.
 */
export class SecretRedactor {
  readonly #names = new Map<string, string>();
  #pattern: RegExp | undefined;

  /** Learns a secret value; later output containing it is masked as `[secret:name]`. */
  add(name: string, value: string): void {
    let changed = false;
    for (const form of secretForms(value)) {
      if (form.length < MIN_REDACTED_LENGTH || this.#names.get(form) === name) continue;
      this.#names.set(form, name);
      changed = true;
    }
    if (changed) this.#pattern = undefined;
  }

  /** Whether this value is already masked (under whatever name it was learned). */
  knows(value: string): boolean {
    return this.#names.has(value);
  }

  /** Whether any value is known (an empty redactor passes text through untouched). */
  get size(): number {
    return this.#names.size;
  }

  /** The text with every known secret value replaced by `[secret:name]`. */
  redact(text: string): string {
    if (this.#names.size === 0 || text.length < MIN_REDACTED_LENGTH) return text;
    const masked = this.#mask(text);
    // Wrapped base64 needs a line break: most texts (ids, times, one-line tasks) have none, and
    // the pattern's scan costs more than all the rest of a record's redaction.
    if (!masked.includes("\n")) return masked;
    return masked.replace(WRAPPED_BASE64, (block) => {
      const joined = block.replace(/\r?\n/g, "");
      const redacted = this.#mask(joined);
      return redacted === joined ? block : `${redacted}${/\n$/.test(block) ? "\n" : ""}`;
    });
  }

  #mask(text: string): string {
    const pattern = this.#compile();
    pattern.lastIndex = 0;
    return text.replace(pattern, (found) => `[secret:${this.#names.get(found) ?? "unknown"}]`);
  }

  /**
   * For output cut in two by a size cap: masks the end of `text` when it is the beginning of a known
   * value (at least MIN_REDACTED_LENGTH characters of it), which plain redaction cannot recognise.
   * The longest such piece of any value wins, so no part of another value is left beside the mask.
   */
  redactCutEnd(text: string): string {
    let best = { length: 0, name: "" };
    for (const [form, name] of this.#names) {
      const tail = text.slice(Math.max(0, text.length - (form.length - 1)));
      const opening = form.slice(0, MIN_REDACTED_LENGTH);
      // The first place the value's opening shows in the tail gives the longest candidate.
      for (let at = tail.indexOf(opening); at !== -1; at = tail.indexOf(opening, at + 1)) {
        const piece = tail.slice(at);
        if (form.startsWith(piece)) {
          if (piece.length > best.length) best = { length: piece.length, name };
          break;
        }
      }
    }
    return best.length === 0 ? text : `${text.slice(0, -best.length)}[secret:${best.name}…]`;
  }

  /** The other side of a cut: masks the start of `text` when it is the end of a known value. */
  redactCutStart(text: string): string {
    let best = { length: 0, name: "" };
    for (const [form, name] of this.#names) {
      const head = text.slice(0, form.length - 1);
      const closing = form.slice(-MIN_REDACTED_LENGTH);
      for (
        let at = head.lastIndexOf(closing);
        at !== -1;
        at = at === 0 ? -1 : head.lastIndexOf(closing, at - 1)
      ) {
        const piece = head.slice(0, at + MIN_REDACTED_LENGTH);
        if (form.endsWith(piece)) {
          if (piece.length > best.length) best = { length: piece.length, name };
          break;
        }
      }
    }
    return best.length === 0 ? text : `[secret:${best.name}…]${text.slice(best.length)}`;
  }

  /** A copy of a JSON-like value with every string redacted. */
  redactValue<Value>(value: Value): Value {
    return this.#names.size === 0 ? value : visitStrings(value, (text) => this.redact(text));
  }

  /** Fits EventBus's `redact` option. */
  readonly redactEvent = (draft: EventDraft): EventDraft => this.redactValue(draft);

  /** Fits the logger's `redact` hook (pino `streamWrite`). */
  readonly redactText = (text: string): string => this.redact(text);

  #compile(): RegExp {
    if (!this.#pattern) {
      // Longest first, so a secret that contains another is masked whole.
      const forms = [...this.#names.keys()].sort((left, right) => right.length - left.length);
      const escaped = forms.map((form) => form.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
      this.#pattern = new RegExp(escaped.join("|"), "g");
    }
    return this.#pattern;
  }
}
