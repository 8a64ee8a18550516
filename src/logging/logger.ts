import pino, { type Logger } from "pino";

export type { Logger };

export interface LoggerOptions {
  level: string;
  /** true, false, or "auto" (pretty when stderr is a TTY). */
  pretty: boolean | "auto";
  /** Masks secret values in every line (the vault's redactor); applied at the source. */
  redact?: (text: string) => string;
  /** Where lines go; default stderr. */
  destination?: NodeJS.WritableStream;
  /**
   * Fields added to every line from where it is logged (a run's `trace_id`: telemetry); handed the
   * line's fields, its level and the logger (a child) it is written with.
   */
  mixin?: ((mergeObject: object, level: number, logger: unknown) => object) | undefined;
}

/**
 * The root logger. Modules take `logger.child({ module: "scheduler" })`. Every line passes through
 * `redact` before it is written, so a secret value cannot reach a log even if someone logs it.
 */
export function createLogger(options: LoggerOptions): Logger {
  const pretty = options.pretty === "auto" ? Boolean(process.stderr.isTTY) : options.pretty;
  const redact = options.redact ?? ((text: string) => text);
  const target = options.destination ?? process.stderr;
  const mixin = options.mixin === undefined ? {} : { mixin: options.mixin };
  if (pretty) {
    const transport = pino.transport({ target: "pino-pretty", options: { destination: 2, colorize: true } });
    return pino({ level: options.level, hooks: { streamWrite: redact }, ...mixin }, transport);
  }
  return pino(
    { level: options.level, hooks: { streamWrite: redact }, ...mixin },
    { write: (line: string) => target.write(line) },
  );
}
