import { SECRET_TEMPLATE } from "../../secrets/secret-template.js";

/** Where a secret template stands in a shell command, as bash would read it. */
export type QuoteContext =
  "bare" | "double" | "single" | "ansi" | "heredoc" | "literal-heredoc" | "arithmetic";

/** Text to put in place of the template `{{secret:name}}` found in `context` (may throw to refuse). */
export type TemplateReplacer = (name: string, context: QuoteContext) => string;

interface PendingHeredoc {
  delimiter: string;
  literal: boolean;
  stripTabs: boolean;
}

const TEMPLATE_AT = new RegExp(SECRET_TEMPLATE.source, "y");
const WORD_END = " \t\n;&|()<>";

/**
 * Copies a shell command while following bash's quoting (quotes, `$'…'`, escapes, comments,
 * `$(…)`, backticks, `${…}`, arithmetic, heredocs) and hands each `{{secret:name}}` with its
 * context to a replacer. Text outside templates is copied unchanged.
 */
export class ShellQuoteScanner {
  readonly #text: string;
  readonly #replace: TemplateReplacer;
  #position = 0;
  #output = "";
  #heredocs: PendingHeredoc[] = [];

  constructor(text: string, replace: TemplateReplacer) {
    this.#text = text;
    this.#replace = replace;
  }

  run(): string {
    this.#bare(undefined, "bare");
    return this.#output;
  }

  /** Replaces a template starting here, if any. */
  #template(context: QuoteContext): boolean {
    TEMPLATE_AT.lastIndex = this.#position;
    const match = TEMPLATE_AT.exec(this.#text);
    if (!match) return false;
    this.#output += this.#replace(match[1] as string, context);
    this.#position += match[0].length;
    return true;
  }

  #templateAt(position: number): boolean {
    TEMPLATE_AT.lastIndex = position;
    return TEMPLATE_AT.test(this.#text);
  }

  #copy(count: number): void {
    this.#output += this.#text.slice(this.#position, this.#position + count);
    this.#position += count;
  }

  #startsWith(text: string): boolean {
    return this.#text.startsWith(text, this.#position);
  }

  /** Unquoted text, to `terminator` at nesting level 0 (or the end). */
  #bare(terminator: ")" | "`" | "}" | undefined, context: "bare" | "double" | "arithmetic"): void {
    const text = this.#text;
    let depth = 0;
    while (this.#position < text.length) {
      if (this.#template(context)) continue;
      const character = text[this.#position] as string;
      const previous = text[this.#position - 1];
      if (character === "\\") {
        // An escaped template is still meant as the secret: the escape is dropped with it.
        if (this.#templateAt(this.#position + 1)) this.#position++;
        else this.#copy(2);
      } else if (character === terminator && depth === 0) {
        this.#copy(1);
        return;
      } else if (this.#startsWith("((") && context !== "double") {
        this.#copy(2);
        this.#bare(")", "arithmetic");
        if (text[this.#position] === ")") this.#copy(1);
      } else if ((character === "(" && terminator === ")") || (character === "{" && terminator === "}")) {
        depth++;
        this.#copy(1);
      } else if ((character === ")" && terminator === ")") || (character === "}" && terminator === "}")) {
        depth--;
        this.#copy(1);
      } else if (character === "'") {
        this.#copy(1);
        this.#single();
      } else if (character === '"') {
        this.#copy(1);
        this.#double(undefined);
      } else if (character === "$") {
        this.#dollar(context);
      } else if (character === "`") {
        this.#copy(1);
        this.#bare("`", "bare");
      } else if (character === "#" && (previous === undefined || WORD_END.includes(previous))) {
        const end = text.indexOf("\n", this.#position);
        this.#copy((end === -1 ? text.length : end) - this.#position);
      } else if (this.#startsWith("<<") && !this.#startsWith("<<<")) {
        this.#heredocOperator();
      } else if (character === "\n") {
        this.#copy(1);
        this.#heredocBodies();
      } else {
        this.#copy(1);
      }
    }
  }

  /** At `$`: the forms that open a nested context; a lone `$` is copied. */
  #dollar(context: "bare" | "double" | "arithmetic"): void {
    if (this.#startsWith("$((")) {
      this.#copy(3);
      this.#bare(")", "arithmetic");
      if (this.#text[this.#position] === ")") this.#copy(1);
    } else if (this.#startsWith("$(")) {
      this.#copy(2);
      this.#bare(")", "bare");
    } else if (this.#startsWith("${")) {
      this.#copy(2);
      this.#bare("}", context);
    } else if (this.#startsWith("$'") && context !== "double") {
      this.#copy(2);
      this.#ansi();
    } else if (this.#startsWith('$"') && context !== "double") {
      this.#copy(2);
      this.#double(undefined);
    } else {
      this.#copy(1);
    }
  }

  #single(): void {
    while (this.#position < this.#text.length) {
      if (this.#template("single")) continue;
      const character = this.#text[this.#position];
      this.#copy(1);
      if (character === "'") return;
    }
  }

  #ansi(): void {
    while (this.#position < this.#text.length) {
      if (this.#template("ansi")) continue;
      const character = this.#text[this.#position];
      if (character === "\\" && this.#templateAt(this.#position + 1)) {
        // A lone backslash before the template stays one: `\\` leaves the quote intact.
        this.#output += "\\\\";
        this.#position++;
      } else if (character === "\\") this.#copy(2);
      else {
        this.#copy(1);
        if (character === "'") return;
      }
    }
  }

  /** Inside `"…"`, or a heredoc line up to `end` (no closing quote there). */
  #double(end: number | undefined): void {
    const context = end === undefined ? "double" : "heredoc";
    const limit = end ?? this.#text.length;
    while (this.#position < limit) {
      if (this.#template(context)) continue;
      const character = this.#text[this.#position] as string;
      const next = this.#text[this.#position + 1];
      if (character === '"' && end === undefined) {
        this.#copy(1);
        return;
      }
      if (character === "\\" && next !== undefined && '$`"\\\n'.includes(next)) this.#copy(2);
      else if (character === "\\" && this.#templateAt(this.#position + 1)) {
        // The backslash is literal here; doubled, it stays literal in front of `${…}`.
        this.#output += "\\";
        this.#copy(1);
      } else if (character === "$") this.#dollar("double");
      else if (character === "`") {
        this.#copy(1);
        this.#bare("`", "bare");
      } else this.#copy(1);
    }
  }

  /** `<<` or `<<-` and its delimiter word; the body starts after the next newline. */
  #heredocOperator(): void {
    const stripTabs = this.#startsWith("<<-");
    this.#copy(stripTabs ? 3 : 2);
    while (this.#text[this.#position] === " " || this.#text[this.#position] === "\t") this.#copy(1);
    const start = this.#position;
    while (this.#position < this.#text.length && !WORD_END.includes(this.#text[this.#position] as string)) {
      this.#copy(1);
    }
    const raw = this.#text.slice(start, this.#position);
    this.#heredocs.push({ delimiter: raw.replace(/['"\\]/g, ""), literal: /['"\\]/.test(raw), stripTabs });
  }

  #heredocBodies(): void {
    const pending = this.#heredocs;
    this.#heredocs = [];
    for (const heredoc of pending) {
      while (this.#position < this.#text.length) {
        const { end, line } = this.#logicalLine(!heredoc.literal);
        const newline = end < this.#text.length ? end : -1;
        if ((heredoc.stripTabs ? line.replace(/^\t+/, "") : line) === heredoc.delimiter) {
          this.#copy(end - this.#position + (newline === -1 ? 0 : 1));
          break;
        }
        if (heredoc.literal) this.#literalLine(end);
        else this.#double(end);
        if (newline !== -1) this.#copy(1);
      }
    }
  }

  /**
   * Where the heredoc line starting here ends, and its text. In a body that expands, a line ending
   * in an odd number of backslashes goes on with the next, as bash reads it.
   */
  #logicalLine(expands: boolean): { end: number; line: string } {
    let end = this.#position;
    let line = "";
    for (;;) {
      const newline = this.#text.indexOf("\n", end);
      const physicalEnd = newline === -1 ? this.#text.length : newline;
      line += this.#text.slice(end, physicalEnd);
      const continued = expands && newline !== -1 && (/\\+$/.exec(line)?.[0].length ?? 0) % 2 === 1;
      if (!continued) return { end: physicalEnd, line };
      line = line.slice(0, -1);
      end = newline + 1;
    }
  }

  #literalLine(end: number): void {
    while (this.#position < end) {
      if (!this.#template("literal-heredoc")) this.#copy(1);
    }
  }
}
