import { describe, expect, it } from "vitest";
import { MaskedPrompts } from "../../src/secrets/masked-prompts.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { makeDefinition } from "../support/make-definition.js";

const TOKEN = "ghp_prompt0123456789abcdefXYZ";

/** A real redactor, counting the texts handed to it. */
function countingRedactor(): { redactor: SecretRedactor; masked: () => number } {
  const redactor = new SecretRedactor();
  let count = 0;
  const redactText = redactor.redactText;
  Object.defineProperty(redactor, "redactText", {
    value: (text: string) => {
      count += 1;
      return redactText(text);
    },
  });
  return { redactor, masked: () => count };
}

describe("MaskedPrompts", () => {
  it("masks an agent's prompt once for all its runs, and again once a value is learned", () => {
    const { redactor, masked } = countingRedactor();
    redactor.add("GITHUB_TOKEN", TOKEN);
    const prompts = new MaskedPrompts(redactor);
    const definition = makeDefinition({ systemPrompt: `Use ${TOKEN} to read the repository.` });
    for (let run = 0; run < 20; run += 1) {
      expect(prompts.of(definition)).toBe("Use [secret:GITHUB_TOKEN] to read the repository.");
    }
    expect(masked()).toBe(1);
    // A value set since (the vault changed between two runs) is masked from the next run on.
    const other = makeDefinition({ systemPrompt: "Post with key sk-live-abcdefghijklmnop0123 only." });
    expect(prompts.of(other)).toContain("sk-live-abcdefghijklmnop0123");
    redactor.add("POST_KEY", "sk-live-abcdefghijklmnop0123");
    expect(prompts.of(other)).toBe("Post with key [secret:POST_KEY] only.");
    expect(prompts.of(definition)).toBe("Use [secret:GITHUB_TOKEN] to read the repository.");
    expect(masked()).toBe(4);
  });

  it("masks a new version of the agent afresh", () => {
    const { redactor } = countingRedactor();
    redactor.add("GITHUB_TOKEN", TOKEN);
    const prompts = new MaskedPrompts(redactor);
    expect(prompts.of(makeDefinition({ systemPrompt: "No secret here." }))).toBe("No secret here.");
    expect(prompts.of(makeDefinition({ systemPrompt: `Now ${TOKEN}.` }))).toBe("Now [secret:GITHUB_TOKEN].");
  });
});
