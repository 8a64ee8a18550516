import { decodeAnsiCQuoted } from "../permissions/ansi-c-quote.js";
import { type SyntaxNode, parseBash } from "../permissions/shell-parser.js";
import { expandBraces } from "./brace-expansion.js";
import {
  type BuiltWord,
  UNKNOWN,
  append,
  bareText,
  globbed,
  tilde,
  unescapeDoubleQuoted,
} from "./built-word.js";

/** One simple command as bash runs it: its words (assignments first) and what its stdin reads. */
export interface SimpleCommand {
  words: string[];
  /** Files its stdin reads (`bash < gate.sh`). */
  inputs: string[];
  /** Text its stdin is given (`bash <<EOF … EOF`, `sh <<< './gate.sh'`). */
  inputText: string | undefined;
}

/** What reading a command line tells, in the order bash would run it. */
export interface CommandLineVisitor {
  command(command: SimpleCommand): void;
  /** A word outside any simple command (`for f in gates/*.sh`, a `case` pattern). */
  word(text: string): void;
  /** Reads what runs in a subshell (`( … )`, `$( … )`): a `cd` there changes no later folder. */
  subshell(read: () => void): void;
}

const WORD_NODES = new Set([
  "word",
  "number",
  "string",
  "raw_string",
  "ansi_c_string",
  "translated_string",
  "concatenation",
  "simple_expansion",
  "expansion",
  "command_substitution",
  "process_substitution",
  "arithmetic_expansion",
]);

/**
 * Reads a command line with the bash grammar (src/permissions/shell-parser.ts; `loadBashParser()`
 * must have run, else this throws) and tells `visitor` every simple command in it, in substitutions,
 * groups, loops and function bodies too, with words as bash passes them: quotes removed, `~` and
 * the variables `known` holds expanded, brace expansion done; what stays unknown until the command
 * runs (another variable, `$(…)`, a glob) is UNKNOWN in its word. Returns whether the parser read
 * everything (false: some of the line may hold commands it could not place).
 */
export function readCommandLine(
  text: string,
  known: Readonly<Record<string, string>>,
  visitor: CommandLineVisitor,
): boolean {
  const tree = parseBash(text);
  try {
    new CommandLineReader(text, known, visitor).visit(tree.rootNode);
    return !tree.rootNode.hasError;
  } finally {
    tree.delete();
  }
}

class CommandLineReader {
  constructor(
    readonly text: string,
    readonly known: Readonly<Record<string, string>>,
    readonly visitor: CommandLineVisitor,
  ) {}

  visit(node: SyntaxNode): void {
    switch (node.type) {
      case "comment":
      case "heredoc_start":
      case "heredoc_body":
      case "heredoc_end":
        return;
      case "command":
        return this.#command(node, []);
      case "redirected_statement": {
        const body = node.childForFieldName("body");
        const redirects = node.namedChildren.filter(
          (child): child is SyntaxNode => child !== null && child.id !== body?.id,
        );
        if (body?.type === "command") this.#command(body, redirects);
        else {
          if (body) this.visit(body);
          for (const redirect of redirects) this.#redirect(redirect, undefined);
        }
        return;
      }
      case "declaration_command":
      case "unset_command": {
        const words = node.firstChild ? [node.firstChild.text] : [];
        words.push(...this.#wordsOf(node.namedChildren.filter((child) => child !== null)));
        this.visitor.command({ words, inputs: [], inputText: undefined });
        return;
      }
      case "variable_assignment":
        this.visitor.command({ words: this.#words(node), inputs: [], inputText: undefined });
        return;
      case "test_command": {
        // `[ -f gate.sh ]`: read as the command `[` with its words.
        const words: string[] = [node.firstChild?.text ?? "["];
        this.#testWords(node, words);
        this.visitor.command({ words, inputs: [], inputText: undefined });
        return;
      }
      case "subshell":
        this.visitor.subshell(() => this.#children(node));
        return;
    }
    if (WORD_NODES.has(node.type)) {
      for (const word of this.#words(node)) this.visitor.word(word);
      return;
    }
    this.#children(node);
  }

  #children(node: SyntaxNode): void {
    for (const child of node.namedChildren) if (child) this.visit(child);
  }

  #command(node: SyntaxNode, outerRedirects: SyntaxNode[]): void {
    const command: SimpleCommand = { words: [], inputs: [], inputText: undefined };
    const redirects = [...outerRedirects];
    const wordNodes: SyntaxNode[] = [];
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === "command_name") {
        if (child.firstNamedChild) wordNodes.push(child.firstNamedChild);
      } else if (child.type.endsWith("redirect")) redirects.push(child);
      else wordNodes.push(child);
    }
    command.words.push(...this.#wordsOf(wordNodes));
    for (const redirect of redirects) this.#redirect(redirect, command);
    this.visitor.command(command);
  }

  /** `< gate.sh` and `<<EOF`/`<<<` give a command its input; any other only reads or writes. */
  #redirect(node: SyntaxNode, command: SimpleCommand | undefined): void {
    if (node.type === "heredoc_redirect") {
      const body = node.namedChildren.find((child) => child?.type === "heredoc_body");
      if (command && body) command.inputText = body.text;
      // `cat <<EOF` … `$(./gate.sh)` … `EOF`: what the body substitutes runs first.
      if (body) this.#substitutions(body);
      // `cat <<EOF | sh`: the commands after the heredoc's start.
      for (const child of node.namedChildren) if (child) this.visit(child);
      return;
    }
    const operator = node.children.find((child) => child !== null && !child.isNamed)?.text;
    for (const child of node.namedChildren) {
      if (!child || child.type === "file_descriptor") continue;
      const words = this.#words(child);
      if (node.type === "herestring_redirect") {
        if (command) command.inputText = words.join(" ");
      } else if (operator === "<") command?.inputs.push(...words);
    }
  }

  #testWords(node: SyntaxNode, words: string[]): void {
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (WORD_NODES.has(child.type)) words.push(...this.#words(child));
      else if (child.type === "test_operator") words.push(child.text);
      else this.#testWords(child, words);
    }
  }

  /** The words bash makes of one word node: one, or more where braces expand (`{a,b}.sh`). */
  #words(node: SyntaxNode): string[] {
    return this.#wordsOf([node]);
  }

  /**
   * The words of a command's word nodes. Nodes that touch are one word: the grammar splits
   * `${DIR}/check-$MODE.py` after its `$` (`${DIR}/check-$`, `MODE.py`), and bash does not.
   */
  #wordsOf(nodes: readonly SyntaxNode[]): string[] {
    const words: string[] = [];
    let building: BuiltWord | undefined;
    let end = -1;
    const finish = () => {
      if (building === undefined) return;
      words.push(...expandBraces(building, UNKNOWN).map((word) => globbed(tilde(word, this.known))));
      building = undefined;
    };
    for (const node of nodes) {
      if (node.startIndex !== end) finish();
      if (building === undefined) this.#part(node, (building = { text: "", bare: [] }));
      else this.#touching(node, building);
      end = node.endIndex;
    }
    finish();
    return words;
  }

  /** A node right after a word: a `$` that ended it names the variable this one starts with. */
  #touching(node: SyntaxNode, building: BuiltWord): void {
    const name = /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(node.text)?.[0];
    if (!building.text.endsWith("$") || building.bare.at(-1) !== true || name === undefined)
      return this.#part(node, building);
    building.text = building.text.slice(0, -1);
    building.bare.pop();
    append(building, this.known[name] ?? UNKNOWN, false);
    bareText(node.text.slice(name.length), building);
  }

  #part(node: SyntaxNode, building: BuiltWord): void {
    const source = this.text.slice(node.startIndex, node.endIndex);
    switch (node.type) {
      case "word":
      case "number":
      case "variable_name":
        return bareText(source, building);
      case "raw_string":
        return append(building, source.slice(1, -1), false);
      case "ansi_c_string":
        return append(building, decodeAnsiCQuoted(source.slice(2, -1)) ?? UNKNOWN, false);
      case "string":
      case "translated_string":
        for (const child of node.children) {
          if (!child) continue;
          if (child.type === "string_content") append(building, unescapeDoubleQuoted(child.text), false);
          else if (child.isNamed) this.#expansion(child, building, false);
          else if (child.text !== '"' && child.text !== '$"') append(building, child.text, false);
        }
        return;
      case "concatenation": {
        let position = node.startIndex;
        for (const child of node.children) {
          if (!child) continue;
          // Text between parts (an operator-like character the grammar kept apart) is bare text.
          if (child.startIndex > position) bareText(this.text.slice(position, child.startIndex), building);
          if (child.isNamed) this.#part(child, building);
          else bareText(child.text, building);
          position = child.endIndex;
        }
        return;
      }
      case "variable_assignment": {
        const value = node.childForFieldName("value");
        append(building, this.text.slice(node.startIndex, value ? value.startIndex : node.endIndex), false);
        if (value) this.#part(value, building);
        return;
      }
      default:
        return this.#expansion(node, building, true);
    }
  }

  /** `$HOME`, `${HOME}`: the value `known` holds; any other expansion, UNKNOWN (its commands are read). */
  #expansion(node: SyntaxNode, building: BuiltWord, bare: boolean): void {
    const name = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(node.text)?.[1];
    const braced = node.text.startsWith("${") === node.text.endsWith("}");
    const value = name !== undefined && braced ? this.known[name] : undefined;
    if (value !== undefined) return append(building, value, false);
    append(building, UNKNOWN, bare);
    if (node.type === "command_substitution" || node.type === "process_substitution")
      this.visitor.subshell(() => this.#children(node));
    else this.#substitutions(node);
  }

  /** The commands of the substitutions an expansion holds (`${X:-$(./default.sh)}`). */
  #substitutions(node: SyntaxNode): void {
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === "command_substitution" || child.type === "process_substitution")
        this.visitor.subshell(() => this.#children(child));
      else this.#substitutions(child);
    }
  }
}
