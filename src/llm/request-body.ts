/** The request's fields whose lists keep their items from one call to the next. */
const KEPT_LISTS = new Set(["messages", "tools"]);

/**
 * The JSON text of chat completion requests, as `JSON.stringify` of their parameters gives it (what
 * the `openai` SDK would send), with the text of each message and each tool made once. A run sends
 * its whole conversation every round, and the conversation only grows between compactions: the
 * loop appends messages and never changes one it has made (see masking-checkpoints.ts and
 * history-tokens.ts), and a compacted, repaired or resumed history is made of new messages where
 * it differs. Turning the whole of it into text every round made a round's cost grow with the run
 * (200 rounds: 8 % of the daemon's CPU in the SDK's encoder); here a round turns only its new
 * messages into text and joins the texts kept of the others. A text is kept for as long as its
 * message is: the keys are weak.
 */
export class RequestBodies {
  readonly #texts = new WeakMap<object, string>();

  /** `JSON.stringify(parameters)`, each item of `messages` and `tools` from its kept text. */
  of(parameters: object): string {
    let body = "";
    for (const [key, value] of Object.entries(parameters) as Array<[string, unknown]>) {
      const text = Array.isArray(value) && KEPT_LISTS.has(key) ? this.#list(value) : JSON.stringify(value);
      // A field whose value JSON has no text for (undefined) is left out, as JSON.stringify does.
      if (text === undefined) continue;
      body += `${body === "" ? "{" : ","}${JSON.stringify(key)}:${text}`;
    }
    return body === "" ? "{}" : `${body}}`;
  }

  #list(items: readonly unknown[]): string {
    const texts = new Array<string>(items.length);
    for (let index = 0; index < items.length; index += 1) texts[index] = this.#item(items[index]);
    return `[${texts.join(",")}]`;
  }

  #item(item: unknown): string {
    if (typeof item !== "object" || item === null) return JSON.stringify(item) ?? "null";
    let text = this.#texts.get(item);
    if (text === undefined) {
      // An item with no JSON text (a function's toJSON giving undefined) is null in a list.
      text = JSON.stringify(item) ?? "null";
      this.#texts.set(item, text);
    }
    return text;
  }
}
