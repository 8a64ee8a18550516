import { decodeAnsiCQuoted } from "./ansi-c-quote.js";

/** One shell word after quote removal, with what the shell would still do to it at run time. */
export interface ShellWord {
  /** The text after quote removal; an expansion keeps a placeholder such as `$(…)` or `$name`. */
  text: string;
  /** Holds an expansion (`$x`, `$(…)`, backticks, `${…}`, brace expansion) known only at run time. */
  dynamic: boolean;
  /** Holds an unquoted `*`, `?` or `[` that the shell may expand against file names. */
  glob: boolean;
  /** The variable name when the word is an assignment such as `NAME=value`. */
  assignment: string | undefined;
}

/** One simple command: the words bash would execute, redirections and their targets removed. */
export interface ShellSimpleCommand {
  words: ShellWord[];
}

/**
 * Every simple command found anywhere in a script (including inside `$(…)`, backticks, process
 * substitutions, subshells and heredoc expansions), and what could not be analysed with confidence.
 */
export interface ParsedShellScript {
  commands: ShellSimpleCommand[];
  doubts: string[];
}

interface Sink {
  commands: ShellSimpleCommand[];
  doubts: string[];
}

interface Heredoc {
  delimiter: string;
  stripTabs: boolean;
  expands: boolean;
}

interface Expansion {
  text: string;
  dynamic: boolean;
}

const MAX_NESTING = 24;
const WORD_BREAKS = " \t\n;&|()<>";
const REDIRECTION = /^(&>>|&>|<<<|<<-|<<|<>|<&|>&|>>|>\||<|>)/;
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=/;
const BRACE_EXPANSION = /\{[^{}]*(,|\.\.)[^{}]*\}/;
/** A name, `$` or a substitution inside arithmetic: bash evaluates a variable's value as code there. */
const VARIABLE_REFERENCE = /[A-Za-z_$`]/;
/**
 * `${a[i]}` or `${x:offset}` with a name in the index or offset (evaluated as arithmetic),
 * `${!x}` (whose target may itself be an indexed name), or `${x@P}` (expanded like a prompt,
 * command substitutions included).
 */
const EVALUATING_PARAMETER = /^!|\[[^\]]*[A-Za-z_$`]|^[^:]*:(?![-=?+])[^}]*[A-Za-z_$`]|@P/;
const ARITHMETIC_DOUBT = "arithmetic on a variable, which evaluates its value as code";

/**
 * A scanner for the bash grammar that matters to a permission check: quoting, escapes, line
 * continuations, comments, operators, subshells, redirections, heredocs, and every form of nested
 * command (`$(…)`, `$((…))`, backticks, `<(…)`, `${…}`). It over-approximates: a word that may be a
 * command is reported as one, and anything it does not understand becomes a doubt.
 */
class ShellScanner {
  position: number;
  readonly #text: string;
  readonly #sink: Sink;
  readonly #depth: number;
  #words: ShellWord[] = [];
  #parenDepth = 0;
  #redirectTargetPending = false;
  #heredocs: Heredoc[] = [];

  constructor(text: string, start: number, sink: Sink, depth: number) {
    this.#text = text;
    this.position = start;
    this.#sink = sink;
    this.#depth = depth;
    if (depth > MAX_NESTING) throw new RangeError("nested too deeply");
  }

  /** Scans commands to the end, or, inside `$(`, to its closing `)`. Returns the position after it. */
  scan(inSubstitution: boolean): number {
    const text = this.#text;
    while (this.position < text.length) {
      const character = text[this.position] as string;
      const next = text[this.position + 1];
      if (character === " " || character === "\t") {
        this.position++;
      } else if (character === "\\" && next === "\n") {
        this.position += 2;
      } else if (character === "\n") {
        this.#endCommand();
        this.position++;
        this.#readHeredocBodies();
      } else if (character === "#") {
        const end = text.indexOf("\n", this.position);
        this.position = end === -1 ? text.length : end;
      } else if (character === ")") {
        this.#endCommand();
        this.position++;
        if (this.#parenDepth > 0) this.#parenDepth--;
        else if (inSubstitution) return this.position;
        else this.#doubt("an unmatched ')'");
      } else if (character === "(") {
        if (next === "(") this.#doubt(ARITHMETIC_DOUBT);
        this.#endCommand();
        this.#parenDepth++;
        this.position++;
      } else if ((character === "<" || character === ">") && next === "(") {
        this.#addWord(this.#readWord());
      } else if (character === "<" || character === ">" || (character === "&" && next === ">")) {
        this.#readRedirection();
      } else if (character === ";" || character === "&" || character === "|") {
        this.#endCommand();
        this.position++;
      } else {
        const start = this.position;
        const word = this.#readWord();
        const after = text[this.position];
        const isDescriptor = /^\d+$/.test(text.slice(start, this.position));
        if (isDescriptor && (after === "<" || after === ">") && text[this.position + 1] !== "(") continue;
        this.#addWord(word);
      }
    }
    if (inSubstitution) this.#doubt("an unterminated $(…)");
    if (this.#parenDepth > 0) this.#doubt("an unclosed '('");
    this.#endCommand();
    if (this.#heredocs.length > 0) this.#readHeredocBodies();
    return this.position;
  }

  /** Scans `text` as the body of a double-quoted string or a heredoc, for the commands it runs. */
  scanExpansions(): void {
    this.#readDoubleQuoted(undefined);
  }

  #doubt(reason: string): void {
    this.#sink.doubts.push(reason);
  }

  #addWord(word: ShellWord): void {
    if (this.#redirectTargetPending) {
      this.#redirectTargetPending = false;
      return;
    }
    this.#words.push(word);
  }

  #endCommand(): void {
    if (this.#redirectTargetPending) this.#doubt("a redirection without a target");
    this.#redirectTargetPending = false;
    if (this.#words.length > 0) this.#sink.commands.push({ words: this.#words });
    this.#words = [];
  }

  #readRedirection(): void {
    const operator = REDIRECTION.exec(this.#text.slice(this.position))?.[0] ?? ">";
    this.position += operator.length;
    while (this.#text[this.position] === " " || this.#text[this.position] === "\t") this.position++;
    if (operator === "<<" || operator === "<<-") {
      const start = this.position;
      const delimiter = this.#readWord();
      const raw = this.#text.slice(start, this.position);
      if (delimiter.text === "") this.#doubt("a heredoc without a delimiter");
      const expands = !/['"\\]/.test(raw);
      this.#heredocs.push({ delimiter: delimiter.text, stripTabs: operator === "<<-", expands });
      return;
    }
    if (operator === "<&" || operator === ">&") {
      const descriptor = /^(\d+-?|-)(?=[\s;&|()<>]|$)/.exec(this.#text.slice(this.position));
      if (descriptor) {
        this.position += descriptor[0].length;
        return;
      }
    }
    this.#redirectTargetPending = true;
  }

  #readHeredocBodies(): void {
    const text = this.#text;
    for (const heredoc of this.#heredocs) {
      let closed = false;
      while (this.position < text.length) {
        const line = this.#readHeredocLine(heredoc.expands);
        if ((heredoc.stripTabs ? line.replace(/^\t+/, "") : line) === heredoc.delimiter) {
          closed = true;
          break;
        }
        if (heredoc.expands) new ShellScanner(line, 0, this.#sink, this.#depth + 1).scanExpansions();
      }
      if (!closed) this.#doubt(`a heredoc without its closing ${heredoc.delimiter}`);
    }
    this.#heredocs = [];
  }

  /**
   * One line of a heredoc body. Where the body expands, bash joins a line ending in an odd number
   * of backslashes with the next before comparing it to the delimiter: `EO\⏎F` closes `<<EOF`.
   */
  #readHeredocLine(expands: boolean): string {
    const text = this.#text;
    let line = "";
    for (;;) {
      const end = text.indexOf("\n", this.position);
      line += text.slice(this.position, end === -1 ? text.length : end);
      this.position = end === -1 ? text.length : end + 1;
      const continued = expands && end !== -1 && (/\\+$/.exec(line)?.[0].length ?? 0) % 2 === 1;
      if (!continued) return line;
      line = line.slice(0, -1);
    }
  }

  #readWord(): ShellWord {
    const text = this.#text;
    let word = "";
    let dynamic = false;
    let glob = false;
    let literalPrefix = "";
    let prefixOpen = true;
    // The word with quoted and expanded parts blanked out, to spot brace expansion.
    let shape = "";
    const opaque = (part: string, isDynamic: boolean) => {
      word += part;
      dynamic ||= isDynamic;
      prefixOpen = false;
      shape += "x";
    };
    while (this.position < text.length) {
      const character = text[this.position] as string;
      const next = text[this.position + 1];
      if ((character === "<" || character === ">") && next === "(") {
        this.position += 2;
        this.#readSubstitution();
        opaque(`${character}(…)`, true);
      } else if (WORD_BREAKS.includes(character)) {
        break;
      } else if (character === "\\") {
        if (next === "\n") {
          this.position += 2;
          continue;
        }
        this.position += next === undefined ? 1 : 2;
        opaque(next ?? "\\", false);
      } else if (character === "'") {
        const end = text.indexOf("'", this.position + 1);
        if (end === -1) this.#doubt("an unterminated single quote");
        const stop = end === -1 ? text.length : end;
        opaque(text.slice(this.position + 1, stop), false);
        this.position = stop + 1;
      } else if (character === '"') {
        this.position++;
        const body = this.#readDoubleQuoted('"');
        opaque(body.text, body.dynamic);
      } else if (character === "$") {
        const expansion = this.#readDollar(false);
        if (expansion.text === "$") {
          word += "$";
          shape += "$";
          if (prefixOpen) literalPrefix += "$";
        } else opaque(expansion.text, expansion.dynamic);
      } else if (character === "`") {
        this.position++;
        this.#readBackticks();
        opaque("`…`", true);
      } else {
        if (character === "*" || character === "?" || character === "[") glob = true;
        word += character;
        shape += character;
        if (prefixOpen) literalPrefix += character;
        this.position++;
      }
    }
    return {
      text: word,
      dynamic: dynamic || BRACE_EXPANSION.test(shape),
      glob,
      assignment: ASSIGNMENT.exec(literalPrefix)?.[1],
    };
  }

  /** Reads from after an opening `"` (or to the end for a heredoc line); expansions are scanned. */
  #readDoubleQuoted(terminator: '"' | undefined): Expansion {
    const text = this.#text;
    let body = "";
    let dynamic = false;
    while (this.position < text.length) {
      const character = text[this.position] as string;
      const next = text[this.position + 1];
      if (character === terminator) {
        this.position++;
        return { text: body, dynamic };
      }
      if (character === "\\" && next !== undefined && '$`"\\\n'.includes(next)) {
        if (next !== "\n") body += next;
        this.position += 2;
      } else if (character === "$") {
        const expansion = this.#readDollar(true);
        body += expansion.text;
        dynamic ||= expansion.dynamic;
      } else if (character === "`") {
        this.position++;
        this.#readBackticks();
        body += "`…`";
        dynamic = true;
      } else {
        body += character;
        this.position++;
      }
    }
    if (terminator) this.#doubt("an unterminated double quote");
    return { text: body, dynamic };
  }

  /** Reads an expansion starting at `$`. A lone `$` comes back as the text "$", not dynamic. */
  #readDollar(insideDoubleQuotes: boolean): Expansion {
    const text = this.#text;
    const next = text[this.position + 1];
    if (next === "'" && !insideDoubleQuotes) return this.#readAnsiCQuoted();
    if (next === '"' && !insideDoubleQuotes) {
      this.position += 2;
      return { text: this.#readDoubleQuoted('"').text, dynamic: true };
    }
    if (next === "(") {
      const start = this.position;
      this.position += 2;
      this.#readSubstitution();
      if (text[start + 2] === "(" && VARIABLE_REFERENCE.test(text.slice(start + 3, this.position))) {
        this.#doubt(ARITHMETIC_DOUBT);
      }
      return { text: "$(…)", dynamic: true };
    }
    if (next === "[") {
      this.position += 2;
      this.#readArithmeticBrackets();
      return { text: "$[…]", dynamic: true };
    }
    if (next === "{") {
      const start = this.position;
      this.position += 2;
      this.#readParameterExpansion();
      if (EVALUATING_PARAMETER.test(text.slice(start + 2, this.position - 1))) {
        this.#doubt("an index, offset, indirection or @P in ${…}, which evaluates variables as code");
      }
      return { text: "${…}", dynamic: true };
    }
    const name = /^([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(text.slice(this.position + 1));
    if (name) {
      this.position += 1 + name[0].length;
      return { text: `$${name[0]}`, dynamic: true };
    }
    this.position++;
    return { text: "$", dynamic: false };
  }

  #readAnsiCQuoted(): Expansion {
    const text = this.#text;
    let end = this.position + 2;
    while (end < text.length && text[end] !== "'") end += text[end] === "\\" ? 2 : 1;
    if (end >= text.length) this.#doubt("an unterminated $'…' string");
    const body = text.slice(this.position + 2, Math.min(end, text.length));
    this.position = Math.min(end + 1, text.length);
    const decoded = decodeAnsiCQuoted(body);
    return decoded === undefined ? { text: body, dynamic: true } : { text: decoded, dynamic: false };
  }

  /** After `$(`, `<(` or `>(`: scans the nested commands up to the matching `)`. */
  #readSubstitution(): void {
    this.position = new ShellScanner(this.#text, this.position, this.#sink, this.#depth + 1).scan(true);
  }

  /** After `$[` (old arithmetic): scans nested expansions up to the matching `]`. */
  #readArithmeticBrackets(): void {
    const text = this.#text;
    const start = this.position;
    let depth = 0;
    while (this.position < text.length) {
      const character = text[this.position] as string;
      if (character === "]" && depth === 0) break;
      if (character === "[") depth++;
      if (character === "]") depth--;
      this.position++;
    }
    if (this.position >= text.length) this.#doubt("an unterminated $[…]");
    const body = text.slice(start, this.position);
    this.position = Math.min(this.position + 1, text.length);
    if (VARIABLE_REFERENCE.test(body)) this.#doubt(ARITHMETIC_DOUBT);
    new ShellScanner(body, 0, this.#sink, this.#depth + 1).scanExpansions();
  }

  /** After `${`: skips to the matching `}`, scanning nested expansions (`${x:-$(cmd)}` runs cmd). */
  #readParameterExpansion(): void {
    const text = this.#text;
    let depth = 0;
    while (this.position < text.length) {
      const character = text[this.position] as string;
      if (character === "}" && depth === 0) {
        this.position++;
        return;
      }
      if (character === "{") depth++;
      if (character === "}") depth--;
      if (character === "\\") this.position += 2;
      else if (character === "'") {
        const end = text.indexOf("'", this.position + 1);
        this.position = end === -1 ? text.length : end + 1;
      } else if (character === '"') {
        this.position++;
        this.#readDoubleQuoted('"');
      } else if (character === "$") this.#readDollar(false);
      else if (character === "`") {
        this.position++;
        this.#readBackticks();
      } else this.position++;
    }
    this.#doubt("an unterminated ${…}");
  }

  /** After an opening backtick: unescapes the body and scans it as a script of its own. */
  #readBackticks(): void {
    const text = this.#text;
    let body = "";
    let closed = false;
    while (this.position < text.length) {
      const character = text[this.position] as string;
      const next = text[this.position + 1];
      if (character === "`") {
        this.position++;
        closed = true;
        break;
      }
      if (character === "\\" && next !== undefined && "$`\\".includes(next)) {
        body += next;
        this.position += 2;
      } else {
        body += character;
        this.position++;
      }
    }
    if (!closed) this.#doubt("an unterminated backtick");
    new ShellScanner(body, 0, this.#sink, this.#depth + 1).scan(false);
  }
}

/**
 * Splits a shell script into every simple command it may run. Never throws: what it cannot follow
 * (too deep, unterminated quotes...) is reported in `doubts`, which a permission check must treat as
 * "ask at best".
 */
export function parseShellScript(script: string): ParsedShellScript {
  const sink: Sink = { commands: [], doubts: [] };
  try {
    new ShellScanner(script, 0, sink, 0).scan(false);
  } catch {
    sink.doubts.push("the command is nested too deeply to analyse");
  }
  return sink;
}
