import { SECRET_TEMPLATE } from "../secrets/secret-template.js";
import { decodeAnsiCQuoted } from "./ansi-c-quote.js";
import { type SyntaxNode, parseBash } from "./shell-parser.js";

/** One word of a command as bash would pass it, with what the shell would still do to it at run time. */
export interface ShellWord {
  /** The text after quote removal when known before running; else the word as written. */
  text: string;
  /** Holds an expansion, a substitution or brace expansion: known only at run time. */
  dynamic: boolean;
  /** Holds an unquoted `*`, `?` or `[`, which the shell may expand against file names. */
  glob: boolean;
  /** Where the word stands in the command text. */
  start: number;
  end: number;
}

/** `NAME=value` before a command (or alone). */
export interface ShellAssignment {
  name: string;
  /** `a[i]=…`: the index is evaluated as arithmetic, which can run code. */
  subscripted: boolean;
  /** The whole `NAME=value` as a word. */
  word: ShellWord;
}

/** One simple command: what bash executes, redirections set apart. */
export interface ShellCommand {
  assignments: ShellAssignment[];
  words: ShellWord[];
}

/** Where a `{{secret:name}}` stands, as bash reads it. */
export type QuoteContext =
  "bare" | "double" | "single" | "ansi" | "heredoc" | "literal-heredoc" | "arithmetic" | "comment";

export interface TemplateSite {
  name: string;
  start: number;
  end: number;
  context: QuoteContext;
}

/**
 * A command line read once by the bash parser: every simple command anywhere in it (inside
 * substitutions, groups, loops, heredoc bodies), every construct outside plain simple commands
 * (which the permission check turns into `ask` at best), and every secret template with its quoting.
 */
export interface ShellReading {
  text: string;
  commands: ShellCommand[];
  /** Constructs outside plain simple commands joined by `;`, `&&`, `||`, `|`, `&`, in words a user reads. */
  doubts: string[];
  /**
   * The text with its line continuations removed, when one joins two pieces of a word or of a
   * heredoc line (`r\⏎m`, `EO\⏎F`): bash joins them before anything else, the parser does not.
   */
  joined: string | undefined;
  templates: TemplateSite[];
}

const BRACE_EXPANSION = /\{[^{}]*(,|\.\.)[^{}]*\}/;
const GLOB = /[*?[]/;
/** A backslash-newline (after an even run of backslashes) between two characters that are not blanks. */
const JOINING_CONTINUATION = /[^\s\\](?:\\\\)*\\\n\S/;
const LINE_CONTINUATION = /((?:^|[^\\])(?:\\\\)*)\\\n/g;
const COMPOUND_STATEMENTS: Record<string, string> = {
  if_statement: "an if statement",
  while_statement: "a loop",
  for_statement: "a loop",
  c_style_for_statement: "an arithmetic loop",
  case_statement: "a case statement",
  function_definition: "a function definition",
};
const MAX_CACHED = 64;
const cache = new Map<string, ShellReading>();

/**
 * Reads a command line with the bash parser. Secret templates are read as plain words of their
 * own length, so where they stand is known and a value never takes part in the parse. Readings of
 * recent command lines are kept: the permission check and the secret rewrite share one parse.
 */
export function readShell(text: string): ShellReading {
  const cached = cache.get(text);
  if (cached) return cached;
  const reading = readUncached(text);
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  cache.set(text, reading);
  return reading;
}

function readUncached(text: string): ShellReading {
  const templates: Array<{ name: string; start: number; end: number }> = [];
  const masked = text.replace(new RegExp(SECRET_TEMPLATE.source, "g"), (found, name: string, at: number) => {
    templates.push({ name, start: at, end: at + found.length });
    return `%${"Z".repeat(found.length - 1)}`;
  });
  const tree = parseBash(masked);
  try {
    const reader = new ShellReader(text);
    reader.visit(tree.rootNode);
    if (tree.rootNode.hasError) reader.doubts.push("syntax the bash parser cannot read with confidence");
    const joined = JOINING_CONTINUATION.test(text) ? text.replace(LINE_CONTINUATION, "$1") : undefined;
    if (joined !== undefined) reader.doubts.push("a line continuation inside a word or a heredoc line");
    const sites = templates.map((template) => ({
      ...template,
      context: quoteContext(
        tree.rootNode.descendantForIndex(template.start, template.end - 1) ?? tree.rootNode,
      ),
    }));
    return { text, commands: reader.commands, doubts: reader.doubts, joined, templates: sites };
  } finally {
    tree.delete();
  }
}

class ShellReader {
  readonly commands: ShellCommand[] = [];
  readonly doubts: string[] = [];
  readonly #text: string;

  /** `text`: the command as written (the tree was parsed from a same-length copy). */
  constructor(text: string) {
    this.#text = text;
  }

  visit(node: SyntaxNode): void {
    const compound = COMPOUND_STATEMENTS[node.type];
    if (compound) this.#doubt(compound);
    switch (node.type) {
      case "comment":
        return;
      case "command":
        this.#command(node);
        return;
      case "declaration_command":
      case "unset_command":
        this.#declaration(node);
        return;
      case "variable_assignment":
        this.commands.push({ assignments: [this.#assignment(node)], words: [] });
        return;
      case "compound_statement":
        if (node.text.startsWith("((")) this.#doubt("arithmetic, which evaluates variables as code");
        break;
      case "test_command":
        if (node.text.startsWith("[[")) this.#doubt("a [[ … ]] test, which may evaluate variables as code");
        else this.#testNames(node);
        break;
      case "file_redirect":
        this.#fileRedirect(node);
        return;
      case "heredoc_start":
        return;
      case "heredoc_body":
        if (
          node.namedChildren.some(
            (child) => child?.type === "expansion" || child?.type === "arithmetic_expansion",
          )
        ) {
          this.#doubt("a ${…} or $((…)) expansion in a heredoc, which may evaluate variables as code");
        }
        break;
      case "ERROR":
        this.#doubt(`text the bash parser cannot read (${this.#slice(node).slice(0, 40)})`);
        break;
    }
    if (node.isMissing) this.#doubt("an unfinished command");
    for (const child of node.namedChildren) if (child) this.visit(child);
  }

  #command(node: SyntaxNode): void {
    const assignments: ShellAssignment[] = [];
    const words: ShellWord[] = [];
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === "variable_assignment") assignments.push(this.#assignment(child));
      else if (child.type === "command_name") {
        const name = child.firstNamedChild;
        if (name) words.push(this.word(name));
      } else if (/redirect$/.test(child.type)) this.visit(child);
      else words.push(this.word(child));
    }
    this.commands.push({ assignments, words });
  }

  /** `export A=1 B`, `declare -x …`, `unset X`: a command whose words may be assignments. */
  #declaration(node: SyntaxNode): void {
    const keyword = node.firstChild;
    const words: ShellWord[] = keyword ? [this.#literal(keyword)] : [];
    const assignments: ShellAssignment[] = [];
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === "variable_assignment") {
        const assignment = this.#assignment(child);
        assignments.push(assignment);
        words.push(assignment.word);
      } else words.push(this.word(child));
    }
    this.commands.push({ assignments, words });
    // The assignments are part of this command's words; their names are judged with it.
    for (const assignment of assignments) this.commands.push({ assignments: [assignment], words: [] });
  }

  #assignment(node: SyntaxNode): ShellAssignment {
    const nameNode = node.childForFieldName("name");
    const value = node.childForFieldName("value");
    const subscripted = nameNode?.type === "subscript";
    const name = (subscripted ? nameNode?.childForFieldName("name") : nameNode)?.text ?? "";
    const prefix = this.#text.slice(node.startIndex, value ? value.startIndex : node.endIndex);
    const valueWord = value ? this.word(value) : undefined;
    if (subscripted && nameNode) this.#walk(nameNode);
    return {
      name,
      subscripted,
      word: {
        text: `${prefix}${valueWord && !valueWord.dynamic ? valueWord.text : this.#slice(value)}`,
        dynamic: valueWord?.dynamic ?? false,
        glob: false,
        start: node.startIndex,
        end: node.endIndex,
      },
    };
  }

  /** `[ -v 'a[i]' ]`: bash evaluates the index of a variable name a test reads, as arithmetic. */
  #testNames(node: SyntaxNode): void {
    for (const child of node.namedChildren) {
      if (!child) continue;
      const operator = child.type === "unary_expression" ? child.childForFieldName("operator") : null;
      const operand = child.lastNamedChild;
      if (operator && /^-[vR]$/.test(operator.text) && operand && /[[$`]/.test(this.#slice(operand))) {
        this.#doubt(`a test of the variable name ${this.#slice(operand)}, whose index is evaluated as code`);
      }
      this.#testNames(child);
    }
  }

  #fileRedirect(node: SyntaxNode): void {
    for (const destination of node.childrenForFieldName("destination")) {
      if (!destination) continue;
      const word = this.word(destination);
      if (word.dynamic) this.#doubt(`a redirection to ${word.text}, known only at run time`);
    }
  }

  /** A word as bash passes it: quotes removed, escapes resolved; nested commands are visited. */
  word(node: SyntaxNode): ShellWord {
    const state = { text: "", dynamic: false, glob: false, shape: "" };
    this.#wordPart(node, state);
    const dynamic = state.dynamic || BRACE_EXPANSION.test(state.shape);
    return {
      text: dynamic ? this.#slice(node) : state.text,
      dynamic,
      glob: state.glob,
      start: node.startIndex,
      end: node.endIndex,
    };
  }

  #wordPart(node: SyntaxNode, state: { text: string; dynamic: boolean; glob: boolean; shape: string }): void {
    const source = this.#slice(node);
    switch (node.type) {
      case "word":
      case "number": {
        const unquoted = unescapeBare(source);
        state.text += unquoted.text;
        state.shape += unquoted.shape;
        state.glob ||= GLOB.test(unquoted.shape);
        return;
      }
      case "raw_string":
        state.text += source.slice(1, -1);
        state.shape += "x";
        return;
      case "ansi_c_string": {
        const decoded = decodeAnsiCQuoted(source.slice(2, -1));
        if (decoded === undefined) state.dynamic = true;
        else state.text += decoded;
        state.shape += "x";
        return;
      }
      case "string":
        this.#doubleQuoted(node, state);
        state.shape += "x";
        return;
      case "concatenation": {
        let position = node.startIndex;
        for (const child of node.children) {
          if (!child) continue;
          // Text between parts (an operator-like character the grammar kept apart) is bare text.
          if (child.startIndex > position) this.#bare(this.#text.slice(position, child.startIndex), state);
          if (child.isNamed) this.#wordPart(child, state);
          else this.#bare(this.#slice(child), state);
          position = child.endIndex;
        }
        return;
      }
      default:
        // Expansions and substitutions: known only at run time; the commands they hold run.
        state.dynamic = true;
        state.shape += "x";
        this.#walk(node);
    }
  }

  #bare(text: string, state: { text: string; glob: boolean; shape: string }): void {
    const unquoted = unescapeBare(text);
    state.text += unquoted.text;
    state.shape += unquoted.shape;
    state.glob ||= GLOB.test(unquoted.shape);
  }

  #doubleQuoted(node: SyntaxNode, state: { text: string; dynamic: boolean }): void {
    for (const child of node.children) {
      if (!child) continue;
      if (child.type === "string_content") state.text += unescapeDoubleQuoted(this.#slice(child));
      else if (child.isNamed) {
        state.dynamic = true;
        this.#walk(child);
      } else if (child.text !== '"' && child.text !== '$"') state.text += child.text;
    }
  }

  /** Visits what a word part holds (`$(…)`, `${x:-$(…)}`), for the commands it runs. */
  #walk(node: SyntaxNode): void {
    if (node.type === "command_substitution" || node.type === "process_substitution") {
      for (const child of node.namedChildren) if (child) this.visit(child);
      return;
    }
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (
        /^(command_substitution|process_substitution|expansion|simple_expansion|arithmetic_expansion|string|concatenation|subscript|binary_expression|unary_expression|parenthesized_expression|ternary_expression|postfix_expression)$/.test(
          child.type,
        )
      ) {
        this.#walk(child);
      }
    }
  }

  #literal(node: SyntaxNode): ShellWord {
    return { text: node.text, dynamic: false, glob: false, start: node.startIndex, end: node.endIndex };
  }

  #slice(node: SyntaxNode | null | undefined): string {
    return node ? this.#text.slice(node.startIndex, node.endIndex) : "";
  }

  #doubt(reason: string): void {
    if (!this.doubts.includes(reason)) this.doubts.push(reason);
  }
}

/** Unquoted text: `\x` is x, a backslash-newline vanishes; `shape` blanks escaped characters. */
function unescapeBare(text: string): { text: string; shape: string } {
  let result = "";
  let shape = "";
  for (let index = 0; index < text.length; index++) {
    const character = text[index] as string;
    if (character === "\\") {
      const next = text[index + 1];
      index++;
      if (next === undefined || next === "\n") continue;
      result += next;
      shape += "x";
    } else {
      result += character;
      shape += character;
    }
  }
  return { text: result, shape };
}

/** Inside `"…"`, a backslash escapes only `$`, a backtick, `"`, `\` and a newline. */
function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_match, escaped: string) => (escaped === "\n" ? "" : escaped));
}

/** How bash reads the text at a node: the nearest quoting or evaluating construct around it. */
function quoteContext(start: SyntaxNode): QuoteContext {
  for (let node: SyntaxNode | null = start; node; node = node.parent) {
    switch (node.type) {
      case "raw_string":
        return "single";
      case "ansi_c_string":
        return "ansi";
      case "string":
      case "translated_string":
        return "double";
      case "comment":
        return "comment";
      case "heredoc_body": {
        const opening = node.parent?.namedChildren.find((child) => child?.type === "heredoc_start");
        return /['"\\]/.test(opening?.text ?? "") ? "literal-heredoc" : "heredoc";
      }
      case "arithmetic_expansion":
      case "subscript":
      case "c_style_for_statement":
        return "arithmetic";
      case "compound_statement":
        if (node.text.startsWith("((")) return "arithmetic";
        break;
      case "test_command":
        if (node.text.startsWith("[[")) return "arithmetic";
        break;
      case "command_substitution":
      case "process_substitution":
        return "bare";
    }
  }
  return "bare";
}
