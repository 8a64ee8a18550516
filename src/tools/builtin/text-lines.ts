import { createReadStream } from "node:fs";

/** One line of a text file, possibly cut. */
export interface TextLine {
  /** The line without its end (`\n` or `\r\n`), at most `maxLineCharacters` long. */
  text: string;
  /** The line was longer than `maxLineCharacters`; the rest was dropped. */
  cut: boolean;
}

/**
 * Streams a UTF-8 file line by line. Lines are split by hand rather than with readline so that
 * even one enormous line never sits in memory: only its first `maxLineCharacters` are kept.
 */
export async function* textLines(
  file: string,
  options: { maxLineCharacters: number; signal: AbortSignal },
): AsyncGenerator<TextLine> {
  const stream = createReadStream(file, { encoding: "utf8", signal: options.signal });
  let current = "";
  let cut = false;
  const add = (text: string) => {
    const room = options.maxLineCharacters - current.length;
    if (text.length > room) cut = true;
    if (room > 0) current += text.slice(0, room);
  };
  const take = (): TextLine => {
    const line = { text: current.endsWith("\r") ? current.slice(0, -1) : current, cut };
    current = "";
    cut = false;
    return line;
  };
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let start = 0;
      for (let newline = chunk.indexOf("\n"); newline !== -1; newline = chunk.indexOf("\n", start)) {
        add(chunk.slice(start, newline));
        start = newline + 1;
        yield take();
      }
      add(chunk.slice(start));
    }
    if (current !== "" || cut) yield take();
  } finally {
    stream.destroy();
  }
}
