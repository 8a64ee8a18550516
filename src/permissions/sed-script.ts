/**
 * Whether a GNU sed script can run a command: its `e` command (`1e cmd`, `/x/,/y/e cmd`, a bare `e`
 * that runs the pattern space) or the `e` flag of `s///e`. The script is read command by command as
 * sed reads it — addresses, `!`, blocks, labels, text of `a`/`i`/`c`, file names of `r`/`w` — so an
 * `e` inside a regular expression, a replacement or a file name is not mistaken for one. A script
 * this reader cannot follow counts as one that runs commands.
 */
export function sedScriptRuns(script: string): boolean {
  return readSedScript(script).runs;
}

/**
 * The commands a sed script's `e cmd` commands run, as written (to the end of their line), for the
 * deny rules: `sed 'e rm x'` runs `rm x`. What `s///e` or a bare `e` runs is the pattern space,
 * which no reading can know.
 */
export function sedScriptCommands(script: string): string[] {
  return readSedScript(script).commands;
}

function readSedScript(script: string): { runs: boolean; commands: string[] } {
  const reader = new SedScriptReader(script);
  try {
    reader.read();
    return { runs: reader.commands.length > 0 || reader.runsPatternSpace, commands: reader.commands };
  } catch (error) {
    if (error instanceof SedRuns) return { runs: true, commands: reader.commands };
    throw error;
  }
}

class SedRuns extends Error {}

const NO_ARGUMENT = new Set(["=", "d", "D", "g", "G", "h", "H", "n", "N", "p", "P", "x", "z", "F"]);
const SEPARATORS = /[\s;]/;

class SedScriptReader {
  /** The text of each `e cmd` met. */
  readonly commands: string[] = [];
  /** A bare `e` or an `s///e` flag: what runs is the pattern space. */
  runsPatternSpace = false;
  #at = 0;
  readonly #script: string;

  constructor(script: string) {
    this.#script = script;
  }

  read(): void {
    const script = this.#script;
    while (this.#at < script.length) {
      const character = script[this.#at] as string;
      if (SEPARATORS.test(character) || character === "}") {
        this.#at++;
        continue;
      }
      if (character === "#") {
        this.#toLineEnd();
        continue;
      }
      this.#address();
      this.#skipBlanks();
      if (script[this.#at] === ",") {
        this.#at++;
        this.#skipBlanks();
        this.#address();
      }
      this.#skipBlanks();
      while (script[this.#at] === "!") {
        this.#at++;
        this.#skipBlanks();
      }
      this.#command();
    }
  }

  #command(): void {
    const script = this.#script;
    const command = script[this.#at++];
    if (command === undefined) throw new SedRuns();
    if (command === "{" || NO_ARGUMENT.has(command)) return;
    switch (command) {
      case "e":
        this.#runCommand();
        return;
      case "s": {
        const delimiter = this.#delimiter();
        this.#until(delimiter);
        this.#until(delimiter);
        this.#substituteFlags();
        return;
      }
      case "y": {
        const delimiter = this.#delimiter();
        this.#until(delimiter);
        this.#until(delimiter);
        return;
      }
      case "a":
      case "i":
      case "c":
        this.#text();
        return;
      case "r":
      case "R":
      case "w":
      case "W":
        this.#toLineEnd();
        return;
      case ":":
      case "b":
      case "t":
      case "T":
      case "v":
        while (this.#at < script.length && !/[;\n]/.test(script[this.#at] as string)) this.#at++;
        return;
      case "q":
      case "Q":
      case "l":
      case "L":
        this.#skipBlanks();
        while (/[0-9]/.test(script[this.#at] ?? "")) this.#at++;
        return;
      default:
        throw new SedRuns();
    }
  }

  #substituteFlags(): void {
    const script = this.#script;
    while (this.#at < script.length) {
      const flag = script[this.#at] as string;
      if (flag === "e") {
        this.runsPatternSpace = true;
        this.#at++;
        continue;
      }
      if (flag === "w") {
        this.#toLineEnd();
        return;
      }
      if (!/[gpiImM0-9]/.test(flag)) return;
      this.#at++;
    }
  }

  /** One address: a line number, `first~step`, `$`, `/re/` or `\cREc` with flags, `+N` or `~N`. */
  #address(): void {
    const script = this.#script;
    const character = script[this.#at];
    if (character === "/" || character === "\\") {
      if (character === "\\") this.#at++;
      const delimiter = this.#delimiter();
      this.#until(delimiter);
      while (/[IM]/.test(script[this.#at] ?? "")) this.#at++;
      return;
    }
    while (/[0-9$~+]/.test(script[this.#at] ?? "")) this.#at++;
  }

  #delimiter(): string {
    const delimiter = this.#script[this.#at++];
    if (delimiter === undefined || delimiter === "\n" || delimiter === "\\") throw new SedRuns();
    return delimiter;
  }

  /** Past the next `delimiter` not escaped by a backslash. */
  #until(delimiter: string): void {
    const script = this.#script;
    while (this.#at < script.length) {
      const character = script[this.#at++] as string;
      if (character === "\\") this.#at++;
      else if (character === delimiter) return;
    }
    throw new SedRuns();
  }

  /** The text of `a`, `i`, `c`: to the end of a line not ended by a backslash. */
  #text(): void {
    const script = this.#script;
    while (this.#at < script.length) {
      const character = script[this.#at++] as string;
      if (character === "\\") this.#at++;
      else if (character === "\n") return;
    }
  }

  /**
   * The rest of an `e` command's line is the command it runs; nothing there is a bare `e`. As GNU
   * sed reads it, a backslash keeps the next character, so a line ending in one goes on to the
   * next (`e date\` then `rm x` on the next line runs both): the command ends at the first newline
   * not escaped, and an escaped newline is a newline of the command.
   */
  #runCommand(): void {
    this.#skipBlanks();
    const script = this.#script;
    let end = this.#at;
    let text = "";
    while (end < script.length && script[end] !== "\n") {
      if (script[end] === "\\" && script[end + 1] === "\n") {
        text += "\n";
        end += 2;
        continue;
      }
      const length = script[end] === "\\" && end + 1 < script.length ? 2 : 1;
      text += script.slice(end, end + length);
      end += length;
    }
    text = text.trim();
    if (text.length === 0) this.runsPatternSpace = true;
    else this.commands.push(text);
    this.#at = end === script.length ? end : end + 1;
  }

  #toLineEnd(): void {
    const end = this.#script.indexOf("\n", this.#at);
    this.#at = end === -1 ? this.#script.length : end + 1;
  }

  #skipBlanks(): void {
    while (/[ \t]/.test(this.#script[this.#at] ?? "")) this.#at++;
  }
}
