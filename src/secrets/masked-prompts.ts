import type { SecretRedactor } from "./secret-redactor.js";

/** What holds a prompt: an agent's definition, one object per definition version. */
interface Prompted {
  readonly systemPrompt: string;
}

/**
 * Agents' system prompts masked with the vault's values, each once per definition version while
 * the redactor learns nothing new: the same text for every run of the agent. Twenty agents due in
 * the same second would otherwise mask twenty prompts (a few KB each, some 40 µs a KB) before
 * their first model requests, and more than the redactor remembers (it keeps the last 16 long
 * texts it masked, among every task, output and event it masks meanwhile).
 */
export class MaskedPrompts {
  readonly #redactor: Pick<SecretRedactor, "redactText" | "learned">;
  readonly #masked = new WeakMap<Prompted, { learned: number; text: string }>();

  constructor(redactor: Pick<SecretRedactor, "redactText" | "learned">) {
    this.#redactor = redactor;
  }

  /** The definition's system prompt, masked with every value the redactor knows now. */
  of(definition: Prompted): string {
    const learned = this.#redactor.learned;
    const known = this.#masked.get(definition);
    if (known !== undefined && known.learned === learned) return known.text;
    const text = this.#redactor.redactText(definition.systemPrompt);
    this.#masked.set(definition, { learned, text });
    return text;
  }
}
