/** How many distinct names are kept: a model may call tools by names no agent offers. */
const MAX_NAMES = 256;

/**
 * Span names (`chat <model>`, `execute_tool <tool>`) made once per distinct operation and subject,
 * not once per span: a span holds its name until its batch is exported (~1 KB a span in all), and
 * a name built per span is a new concatenation the exporter's encoder flattens again each time.
 */
export class SpanNames {
  readonly #operation: string;
  readonly #names = new Map<string, string>();

  constructor(operation: string) {
    this.#operation = operation;
  }

  /** `<operation> <subject>`, the same string each time for a subject seen before. */
  of(subject: string): string {
    const known = this.#names.get(subject);
    if (known !== undefined) return known;
    const name = `${this.#operation} ${subject}`;
    if (this.#names.size < MAX_NAMES) this.#names.set(subject, name);
    return name;
  }
}
