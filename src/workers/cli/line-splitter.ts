import { StringDecoder } from "node:string_decoder";

/** Cuts a byte stream into lines (UTF-8 safe across chunks) and hands each to `onLine`. */
export class LineSplitter {
  readonly #decoder = new StringDecoder("utf8");
  readonly #onLine: (line: string) => void;
  #rest = "";

  constructor(onLine: (line: string) => void) {
    this.#onLine = onLine;
  }

  push(chunk: Buffer | string): void {
    const text = this.#rest + (typeof chunk === "string" ? chunk : this.#decoder.write(chunk));
    const lines = text.split("\n");
    this.#rest = lines.pop() ?? "";
    for (const line of lines) this.#onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
  }

  /** Hands over the last line when the stream ended without a newline. */
  end(): void {
    const last = this.#rest + this.#decoder.end();
    this.#rest = "";
    if (last !== "") this.#onLine(last);
  }
}
