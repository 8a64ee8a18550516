import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { TriggerHealth } from "../../src/triggers/trigger-health.js";
import { ManualClock } from "../support/manual-clock.js";

const SECRET = "sk-live-7f3a9c1e5b2d8f4a6c0e9b7d";

describe("a trigger's last error", () => {
  it("shows none of a secret its 500-character cut falls inside", () => {
    const redactor = new SecretRedactor();
    redactor.add("api_key", SECRET);
    const health = new TriggerHealth(new ManualClock(0), redactor.redactText);
    // The first 500 characters are kept: the secret's first 12 would be.
    health.record("digest", "intake", "failed", `${"x".repeat(500 - 12)}${SECRET} was refused`);

    const shown = health.of("digest", "intake").last_error ?? "";
    expect(shown).toContain("[secret:");
    expect(shown).not.toContain(SECRET.slice(0, 8));
  });

  it("shows a whole secret masked", () => {
    const redactor = new SecretRedactor();
    redactor.add("api_key", SECRET);
    const health = new TriggerHealth(new ManualClock(0), redactor.redactText);
    health.record("digest", "intake", "failed", `could not read ${SECRET}`);

    expect(health.of("digest", "intake").last_error).toBe("could not read [secret:api_key]");
  });
});
