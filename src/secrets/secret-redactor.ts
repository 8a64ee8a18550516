import type { EventDraft } from "../events/agent-event.js";
import { decodeEscapes, decodeQuotedPrintable } from "./decode-escapes.js";
import { foldText, joinDecimalBytes, joinOctalBytes, joinSpacedHex, joinWrappedLines } from "./fold-text.js";
import { secretForms } from "./secret-encodings.js";
import { visitStrings } from "./secret-template.js";
import { TextView } from "./text-view.js";
import { type DumpViews, dumpViews } from "./dump-views.js";
import { mayHoldDump, wordDumpViews } from "./word-dumps.js";
import { spacedCharactersView } from "./spaced-characters.js";
import { encodedBlocksView } from "./encoded-blocks.js";

/** Values shorter than this are not redacted: masking every "abc" would wreck all output. */
export const MIN_REDACTED_LENGTH = 4;

/**
 * Texts of this many characters and more are remembered with their masked form (see `redact`),
 * up to REMEMBERED_MAX_LENGTH (what a tool's output is capped to, by default, fits) and
 * REMEMBERED_TEXTS of them: a tool's output is masked by the executor, then again as the
 * observation event's and the checkpoint's, and most such text holds no secret, so all three
 * are the same text. Shorter texts cost less to mask than to remember.
 */
const REMEMBERED_MIN_LENGTH = 64;
const REMEMBERED_MAX_LENGTH = 65_536;
const REMEMBERED_TEXTS = 16;
/**
 * Texts longer than this are searched for encoded forms window by window (the plain forms are
 * searched whole): the views' patterns (spaced hex bytes, decimal bytes) keep one backtracking
 * entry per byte of a run, and a run of a few megabytes of hex digits (a 5 MB MCP answer, a hex
 * dump) overflowed the regex engine's stack, failing the tool call with "Maximum call stack size
 * exceeded". Windows overlap by far more than any secret's longest encoded form, so a value
 * written anywhere lies whole in at least one window.
 */
const WINDOW_CHARACTERS = 1_048_576;
const WINDOW_OVERLAP_CHARACTERS = 65_536;

/** A byte (in hex, at an even place) that a dump's character column shows as `.`: outside printable ASCII. */
const NOT_SHOWN_BYTE = /^(?:[0-9a-f]{2})*?(?:[01][0-9a-f]|7f|[89a-f][0-9a-f])/;

/** A span of the text to mask, and the secret it holds. */
interface Found {
  start: number;
  end: number;
  name: string;
}

/** Forms of the known values, each with its secret's name, and the pattern that finds them. */
class FormSet {
  readonly names = new Map<string, string>();
  #search: FormSearch | undefined;
  #shortest = Number.POSITIVE_INFINITY;

  /** Adds a form; whether it was new. */
  add(form: string, name: string): boolean {
    if (form.length < MIN_REDACTED_LENGTH || this.names.get(form) === name) return false;
    this.names.set(form, name);
    this.#shortest = Math.min(this.#shortest, form.length);
    this.#search = undefined;
    return true;
  }

  /** The length of the shortest form (infinite when empty): shorter texts cannot hold one. */
  get shortest(): number {
    return this.#shortest;
  }

  /**
   * Alternations of every form, longest first, so a value that contains another is found whole;
   * as few as V8 allows (a pattern past ~32,000 characters is "too large": one secret of 4 KB made
   * one in its binary form alone, and every redaction threw); a form longer than a pattern holds
   * is looked for as plain text.
   */
  get search(): FormSearch {
    if (!this.#search) {
      const forms = [...this.names.keys()].sort((left, right) => right.length - left.length);
      const patterns: RegExp[] = [];
      const literals: string[] = [];
      let chunk: string[] = [];
      let chunkLength = 0;
      for (const form of forms) {
        const escaped = form.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        if (escaped.length > PATTERN_SOURCE_LIMIT) {
          literals.push(form);
          continue;
        }
        if (chunkLength + escaped.length + 1 > PATTERN_SOURCE_LIMIT && chunk.length > 0) {
          patterns.push(new RegExp(chunk.join("|"), "g"));
          chunk = [];
          chunkLength = 0;
        }
        chunk.push(escaped);
        chunkLength += escaped.length + 1;
      }
      if (chunk.length > 0) patterns.push(new RegExp(chunk.join("|"), "g"));
      this.#search = { patterns, literals };
    }
    return this.#search;
  }

  /**
   * Adds to `found` every form in `view`, as spans of the original text; `widen`, when given, may
   * widen each span, given the form matched.
   */
  find(view: TextView, found: Found[], widen?: (span: Found, form: string) => Found): void {
    if (this.names.size === 0 || view.text.length < this.#shortest) return;
    const { patterns, literals } = this.search;
    const add = (index: number, form: string) => {
      const [start, end] = view.originalSpan(index, index + form.length);
      const span = { start, end, name: this.names.get(form) ?? "unknown" };
      found.push(widen ? widen(span, form) : span);
    };
    for (const form of literals) {
      for (
        let index = view.text.indexOf(form);
        index >= 0;
        index = view.text.indexOf(form, index + form.length)
      )
        add(index, form);
    }
    for (const pattern of patterns) {
      pattern.lastIndex = 0;
      for (let match = pattern.exec(view.text); match !== null; match = pattern.exec(view.text))
        add(match.index, match[0]);
    }
  }
}

/** The regular expressions and the plain texts one FormSet is searched with. */
interface FormSearch {
  patterns: RegExp[];
  literals: string[];
}

/** The longest source of one pattern: well below V8's limit (about 32,000 characters of literals). */
const PATTERN_SOURCE_LIMIT = 16_000;

/**
 * The canonical form a value is matched in: escapes decoded (decodeEscapes, quoted-printable) and
 * folded (foldText). The output goes through the same steps, so a value is found whatever quoting,
 * escaping, case or Unicode normalisation a tool wrote it in.
 */
function canonicalView(view: TextView): TextView {
  return foldText(decodeQuotedPrintable(view));
}

/**
 * Knows every secret value loaded so far and replaces each occurrence with `[secret:name]`, in
 * three passes over a text:
 *
 * 1. the value's written forms (as written, JSON-escaped, percent-encoded) and the encodings whose
 *    alphabets hold quotes and backslashes (Ascii85, base85, Z85, uuencode; base58), exactly;
 * 2. the value's canonical form (canonicalView) in the canonical view of the text: ANSI escapes and
 *    invisible characters removed; HTML entities, percent, backslash (C, Python, JSON, shell),
 *    `cat -v` and quoted-printable escapes decoded, repeatedly; NFKD, case folded, quotes dropped,
 *    whitespace and `+` made one;
 * 3. the value's encodings (base64, base64url, base32 at every byte alignment, hex, binary) in the
 *    decoded text with wrapped lines joined, and in a dump's lines (`xxd`, `hexdump`, `od`) with
 *    their offsets and character columns set apart (dumpViews).
 *
 * A match in a view is masked where it came from in the text (TextView keeps the map), so the
 * colour codes, quotes or escapes inside it go with it. One instance serves the tool executor, the
 * event bus (`redactEvent`), the checkpoints and the logger (`redactText`).
 */
export class SecretRedactor {
  /** Written forms, matched exactly (pass 1). */
  readonly #written = new FormSet();
  /** Canonical forms, matched in the canonical view (pass 2). */
  readonly #canonical = new FormSet();
  /** Encodings whose case matters, and lowercase ones whose case does not (pass 3). */
  readonly #encoded = new FormSet();
  readonly #caseless = new FormSet();
  /** The bytes in decimal and in three-digit octal, matched where output lists bytes as numbers. */
  readonly #decimal = new FormSet();
  /** Every form, for the cut checks and `knows`. */
  readonly #exact = new FormSet();
  /** Long texts masked lately, and what they were masked to, since the last `add`. */
  readonly #remembered = new Map<string, string>();
  /** Values learned so far (`learned`). */
  #learned = 0;

  /**
   * Learns a secret value; later output containing it is masked as `[secret:name]`. A value shorter
   * than MIN_REDACTED_LENGTH is not learned at all, nor are its encodings (`agentd secrets set` warns).
   */
  add(name: string, value: string): void {
    if (value.length < MIN_REDACTED_LENGTH) return;
    // A text masked before may hold this value (or show a known value under this name now).
    this.#remembered.clear();
    this.#learned += 1;
    const { written, printed, encoded, caseless, decimal, octal } = secretForms(value);
    for (const form of [...decimal, octal]) this.#decimal.add(form, name);
    for (const form of written) this.#written.add(form, name);
    for (const form of printed) this.#written.add(form, name);
    for (const form of encoded) this.#encoded.add(form, name);
    for (const form of caseless) this.#caseless.add(form, name);
    for (const form of [...written, ...printed, ...encoded, ...caseless]) this.#exact.add(form, name);
    this.#canonical.add(canonicalView(decodeEscapes(TextView.of(value))).text, name);
  }

  /** Whether this value is already masked (under whatever name it was learned). */
  knows(value: string): boolean {
    return this.#exact.names.has(value);
  }

  /**
   * How many values were learned so far (a value learned again under another name counts too): a
   * text masked while this stays the same is masked the same way.
   */
  get learned(): number {
    return this.#learned;
  }

  /** How many forms are known (an empty redactor passes text through untouched). */
  get size(): number {
    return this.#exact.names.size + this.#canonical.names.size;
  }

  /**
   * The text with every known secret value, in any of the forms above, replaced by `[secret:name]`.
   * A long text masked lately, with nothing learned since, gets the same answer without the passes.
   */
  redact(text: string): string {
    if (this.size === 0 || text.length < MIN_REDACTED_LENGTH) return text;
    if (text.length < REMEMBERED_MIN_LENGTH || text.length > REMEMBERED_MAX_LENGTH) return this.#mask(text);
    const remembered = this.#remembered.get(text);
    if (remembered !== undefined) return remembered;
    const masked = this.#mask(text);
    if (this.#remembered.size >= REMEMBERED_TEXTS) {
      const oldest = this.#remembered.keys().next();
      if (oldest.done !== true) this.#remembered.delete(oldest.value);
    }
    this.#remembered.set(text, masked);
    return masked;
  }

  /** `redact`'s three passes. */
  #mask(text: string): string {
    const written = this.#written;
    let masked = text;
    if (text.length >= written.shortest) {
      // Longest forms first, whether a plain text or in the first of the patterns.
      const { patterns, literals } = written.search;
      for (const form of literals)
        masked = masked.replaceAll(form, `[secret:${written.names.get(form) ?? "unknown"}]`);
      for (const pattern of patterns) {
        pattern.lastIndex = 0;
        masked = masked.replace(pattern, (found) => `[secret:${written.names.get(found) ?? "unknown"}]`);
      }
    }
    const shortest = Math.min(this.#canonical.shortest, this.#encoded.shortest, this.#caseless.shortest);
    if (masked.length < shortest) return masked;
    const found: Found[] = [];
    if (masked.length <= WINDOW_CHARACTERS) this.#findEncoded(masked, found);
    else {
      for (let start = 0; ; start += WINDOW_CHARACTERS - WINDOW_OVERLAP_CHARACTERS) {
        const inWindow: Found[] = [];
        this.#findEncoded(masked.slice(start, start + WINDOW_CHARACTERS), inWindow);
        for (const span of inWindow)
          found.push({ ...span, start: span.start + start, end: span.end + start });
        if (start + WINDOW_CHARACTERS >= masked.length) break;
      }
    }
    return found.length === 0 ? masked : maskSpans(masked, found);
  }

  /** Passes 2 and 3 over `masked`: the spans of the canonical and encoded forms found in its views. */
  #findEncoded(masked: string, found: Found[]): void {
    const decoded = decodeEscapes(TextView.of(masked));
    this.#canonical.find(canonicalView(decoded), found);
    const blocks = encodedBlocksView(TextView.of(masked));
    if (blocks !== undefined) this.#caseless.find(blocks, found);
    const spaced = spacedCharactersView(TextView.of(masked));
    if (spaced !== undefined) this.#canonical.find(canonicalView(decodeEscapes(spaced)), found);
    const joined = joinWrappedLines(decoded);
    this.#encoded.find(joined, found);
    // Each family alone keeps the pattern fast: one alternation of mixed-case forms is 100x slower.
    const lower = joined.withSameLength(lowerCase(joined.text));
    this.#caseless.find(lower, found);
    const spacedHex = joinSpacedHex(lower);
    if (spacedHex !== lower) this.#caseless.find(spacedHex, found);
    this.#decimal.find(joinDecimalBytes(decoded), found);
    const octal = joinOctalBytes(decoded);
    if (octal.text !== decoded.text) this.#decimal.find(octal, found);
    if (!mayHoldDump(masked)) return;
    for (const words of wordDumpViews(TextView.of(masked))) this.#caseless.find(words, found);
    const dump = dumpViews(TextView.of(masked));
    if (dump !== undefined) this.#findInDump(dump, masked, found);
  }

  /** The forms of a value a dump (`od`, `hexdump`, `xxd`) splits over its lines, found whole. */
  #findInDump(dump: DumpViews, masked: string, found: Found[]): void {
    const { joined, spaced, text, words } = dump;
    // A byte the character column shows as `.` leaves the value unreadable there, so the column
    // view cannot find it: the rest of the line the value ends on (its column) is masked with it.
    const withColumn = (span: Found, hex: string): Found => {
      if (!NOT_SHOWN_BYTE.test(hex)) return span;
      const lineEnd = masked.indexOf("\n", span.end);
      return { ...span, end: lineEnd === -1 ? masked.length : lineEnd };
    };
    this.#caseless.find(joined.withSameLength(lowerCase(joined.text)), found, withColumn);
    this.#encoded.find(joined, found);
    this.#canonical.find(canonicalView(decodeEscapes(joined)), found);
    this.#decimal.find(joinDecimalBytes(spaced), found);
    this.#decimal.find(joinOctalBytes(spaced), found);
    this.#canonical.find(canonicalView(decodeEscapes(text)), found);
    // The value's hex, from words that held its bytes in another order.
    if (words !== undefined) {
      this.#caseless.find(words.withSameLength(lowerCase(words.text)), found, withColumn);
    }
  }

  /**
   * For output cut in two by a size cap: masks the end of `text` when it is the beginning of a known
   * value (at least MIN_REDACTED_LENGTH characters of it, in any exact form or in the canonical
   * view), which plain redaction cannot recognise. The longest such piece wins, so no part of
   * another value is left beside the mask.
   */
  redactCutEnd(text: string): string {
    const candidates: Found[] = [];
    const exact = longestCutEnd(text, this.#exact.names);
    if (exact) candidates.push({ start: text.length - exact.length, end: text.length, name: exact.name });
    const view = canonicalView(decodeEscapes(TextView.of(text)));
    const canonical = longestCutEnd(view.text, this.#canonical.names);
    if (canonical) {
      const [start] = view.originalSpan(view.text.length - canonical.length, view.text.length);
      candidates.push({ start, end: text.length, name: canonical.name });
    }
    const earliest = candidates.sort((left, right) => left.start - right.start)[0];
    return earliest ? `${text.slice(0, earliest.start)}[secret:${earliest.name}…]` : text;
  }

  /** The other side of a cut: masks the start of `text` when it is the end of a known value. */
  redactCutStart(text: string): string {
    const candidates: Found[] = [];
    const exact = longestCutStart(text, this.#exact.names);
    if (exact) candidates.push({ start: 0, end: exact.length, name: exact.name });
    const view = canonicalView(decodeEscapes(TextView.of(text)));
    const canonical = longestCutStart(view.text, this.#canonical.names);
    if (canonical) {
      const [, end] = view.originalSpan(0, canonical.length);
      candidates.push({ start: 0, end, name: canonical.name });
    }
    const latest = candidates.sort((left, right) => right.end - left.end)[0];
    return latest ? `[secret:${latest.name}…]${text.slice(latest.end)}` : text;
  }

  /** A copy of a JSON-like value with every string redacted. */
  redactValue<Value>(value: Value): Value {
    return this.size === 0 ? value : visitStrings(value, (text) => this.redact(text));
  }

  /** Fits EventBus's `redact` option. */
  readonly redactEvent = (draft: EventDraft): EventDraft => this.redactValue(draft);

  /** Fits the logger's `redact` hook (pino `streamWrite`). */
  readonly redactText = (text: string): string => this.redact(text);
}

/** ASCII letters lowercased, every other character kept (the same length, always). */
function lowerCase(text: string): string {
  const lower = text.toLowerCase();
  return lower.length === text.length ? lower : text.replace(/[A-Z]+/g, (run) => run.toLowerCase());
}

/** `text` with each span replaced by `[secret:name]` (overlapping spans merged). */
function maskSpans(text: string, found: Found[]): string {
  found.sort((left, right) => left.start - right.start || right.end - left.end);
  let masked = "";
  let position = 0;
  for (let index = 0; index < found.length;) {
    const first = found[index] as Found;
    let end = first.end;
    for (index++; index < found.length && (found[index] as Found).start < end; index++) {
      end = Math.max(end, (found[index] as Found).end);
    }
    masked += `${text.slice(position, first.start)}[secret:${first.name}]`;
    position = end;
  }
  return masked + text.slice(position);
}

/** The longest end of `text` that begins one of `forms` (at least MIN_REDACTED_LENGTH long). */
function longestCutEnd(
  text: string,
  forms: Map<string, string>,
): { length: number; name: string } | undefined {
  let best: { length: number; name: string } | undefined;
  for (const [form, name] of forms) {
    const tail = text.slice(Math.max(0, text.length - (form.length - 1)));
    const opening = form.slice(0, MIN_REDACTED_LENGTH);
    // The first place the value's opening shows in the tail gives the longest candidate.
    for (let at = tail.indexOf(opening); at !== -1; at = tail.indexOf(opening, at + 1)) {
      const piece = tail.slice(at);
      if (form.startsWith(piece)) {
        if (piece.length > (best?.length ?? 0)) best = { length: piece.length, name };
        break;
      }
    }
  }
  return best;
}

/** The longest start of `text` that ends one of `forms` (at least MIN_REDACTED_LENGTH long). */
function longestCutStart(
  text: string,
  forms: Map<string, string>,
): { length: number; name: string } | undefined {
  let best: { length: number; name: string } | undefined;
  for (const [form, name] of forms) {
    const head = text.slice(0, form.length - 1);
    const closing = form.slice(-MIN_REDACTED_LENGTH);
    for (
      let at = head.lastIndexOf(closing);
      at !== -1;
      at = at === 0 ? -1 : head.lastIndexOf(closing, at - 1)
    ) {
      const piece = head.slice(0, at + MIN_REDACTED_LENGTH);
      if (form.endsWith(piece)) {
        if (piece.length > (best?.length ?? 0)) best = { length: piece.length, name };
        break;
      }
    }
  }
  return best;
}
