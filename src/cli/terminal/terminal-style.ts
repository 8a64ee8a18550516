import { styleText } from "node:util";

export type Style = Parameters<typeof styleText>[0];

/** `text` in `style` when colours are on, else unchanged. */
export function paint(color: boolean, style: Style, text: string): string {
  return color ? styleText(style, text, { validateStream: false }) : text;
}

/** A stream the output may be drawn on. */
export interface OutputStream {
  isTTY?: boolean;
}

/**
 * Whether a stream takes live drawing (a status line redrawn in place): a terminal that is not
 * `TERM=dumb`. Anything else (a file, a pipe, CI logs) gets plain lines without escape codes.
 */
export function isLiveTerminal(stream: OutputStream, environment: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && environment["TERM"] !== "dumb";
}

/** Colours on a live terminal unless `NO_COLOR` is set to anything but the empty string (no-color.org). */
export function wantsColor(stream: OutputStream, environment: NodeJS.ProcessEnv = process.env): boolean {
  return isLiveTerminal(stream, environment) && !environment["NO_COLOR"];
}
