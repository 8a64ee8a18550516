/** The longest stderr line logged as it is; a longer one is logged as its length only. */
export const LOGGED_LINE_CHARACTERS = 4_096;

/**
 * Cuts what an MCP server writes to stderr into whole lines for the debug log, whatever chunks it
 * arrives in: the logger masks every secret value within one line it writes, so a value the
 * server's writes (or the pipe) split in two is masked only once both halves are in one line. A
 * line longer than LOGGED_LINE_CHARACTERS is not kept: any cut of it could fall inside a value and
 * leave its pieces unmasked, so only its length is passed on. What is left when the stream ends
 * is a last line.
 */
export class StderrLines {
  readonly #onLine: (line: string) => void;
  readonly #onLongLine: (characters: number) => void;
  #pending = "";
  /** Characters of the current line once it grew past the limit (its text is dropped), else -1. */
  #overflow = -1;

  constructor(onLine: (line: string) => void, onLongLine: (characters: number) => void) {
    this.#onLine = onLine;
    this.#onLongLine = onLongLine;
  }

  /** Takes the next chunk of stderr; passes on each line it completes. */
  write(text: string): void {
    let rest = text;
    for (let lineBreak = rest.indexOf("\n"); lineBreak !== -1; lineBreak = rest.indexOf("\n")) {
      this.#add(rest.slice(0, lineBreak));
      this.#finishLine();
      rest = rest.slice(lineBreak + 1);
    }
    this.#add(rest);
  }

  /** The stream ended: passes on what is left as a last line. */
  end(): void {
    if (this.#pending !== "" || this.#overflow !== -1) this.#finishLine();
  }

  #add(text: string): void {
    if (this.#overflow !== -1) {
      this.#overflow += text.length;
      return;
    }
    this.#pending += text;
    if (this.#pending.length > LOGGED_LINE_CHARACTERS) {
      this.#overflow = this.#pending.length;
      this.#pending = "";
    }
  }

  #finishLine(): void {
    if (this.#overflow !== -1) this.#onLongLine(this.#overflow);
    else this.#onLine(this.#pending.replace(/\r$/, ""));
    this.#pending = "";
    this.#overflow = -1;
  }
}
