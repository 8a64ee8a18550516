import { jsonItemText } from "./json-item-text.js";

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
 * messages into text (or finds the text its checkpoint line made: json-item-text.ts) and adds them
 * to the text its history had last round. A text is kept for as long as its message (or its list)
 * is: the keys are weak.
 */
export class RequestBodies {
  /** By list (a run's history, which it appends to): how much of it was joined into text, and how. */
  readonly #joined = new WeakMap<readonly unknown[], JoinedItems>();

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

  /**
   * The list's JSON text. A list that grew since it was last sent (the same array, the item last
   * joined still in its place) adds its new items to the text it had; any other is joined whole.
   */
  #list(items: readonly unknown[]): string {
    const joined = this.#joined.get(items);
    const grown =
      joined !== undefined &&
      items.length >= joined.count &&
      (joined.count === 0 || items[joined.count - 1] === joined.last);
    let text = grown ? joined.text : "";
    for (let index = grown ? joined.count : 0; index < items.length; index += 1)
      text = index === 0 ? this.#item(items[index]) : `${text},${this.#item(items[index])}`;
    this.#joined.set(items, { count: items.length, last: items.at(-1), text });
    return `[${text}]`;
  }

  #item(item: unknown): string {
    // An item with no JSON text (a function's toJSON giving undefined) is null in a list.
    if (typeof item !== "object" || item === null) return JSON.stringify(item) ?? "null";
    return jsonItemText(item);
  }
}

/** The first `count` items of a list as JSON texts joined by commas, the last of them `last`. */
interface JoinedItems {
  count: number;
  last: unknown;
  text: string;
}
