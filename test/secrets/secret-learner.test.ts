import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSecretLearner } from "../../src/app/daemon-secrets.js";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { createLogger } from "../../src/logging/logger.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { createVault } from "../../src/vault/create-vault.js";
import type { Vault } from "../../src/vault/vault.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** An `env`-like vault whose listing answers only when the test lets it: a slow read in flight. */
function heldVault(values: Map<string, string>) {
  const held: (() => void)[] = [];
  const vault: Vault = {
    backend: "env",
    list: () => {
      // The names as they are when the read starts, answered later.
      const names = [...values.keys()].sort();
      return new Promise((resolve) => held.push(() => resolve(names)));
    },
    get: (name) => Promise.resolve(values.get(name)),
    set: () => Promise.reject(new Error("not used")),
    remove: () => Promise.reject(new Error("not used")),
  };
  const answerAll = () => {
    for (const answer of held.splice(0)) answer();
  };
  return { vault, answerAll, pending: () => held.length };
}

describe("the daemon's secret learner", () => {
  it("reads the vault again for a caller that came after a read already under way", async () => {
    const dataDirectory = mkdtempSync(path.join(os.tmpdir(), "agentd-learner-"));
    folders.push(dataDirectory);
    const values = new Map([["early", "early-Secret-4c1d9e7a"]]);
    const { vault, answerAll, pending } = heldVault(values);
    const redactor = new SecretRedactor();
    const config = { ...ConfigSchema.parse({}), data_dir: dataDirectory };
    const learner = createSecretLearner(
      { vault, config, redactor },
      createLogger({ level: "silent", pretty: false }),
    );

    // A run's start reads the vault; while that read is under way the operator sets a secret, and
    // a second run quoting it is queued: its first record must be masked with the new value.
    const first = learner.refresh();
    await Promise.resolve();
    expect(pending()).toBe(1);
    values.set("late", "late-Secret-0b8f3a62e5");
    const second = learner.refresh();
    answerAll();
    await first;
    // The second caller's read (if one was made) is answered too.
    for (let round = 0; round < 10 && pending() > 0; round += 1) {
      answerAll();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await second;
    expect(redactor.redact("deploy with late-Secret-0b8f3a62e5")).toBe("deploy with [secret:late]");
  });

  it("says it is current only while the vault file is as it last read it", async () => {
    const dataDirectory = mkdtempSync(path.join(os.tmpdir(), "agentd-learner-"));
    folders.push(dataDirectory);
    const config = { ...ConfigSchema.parse({}), data_dir: dataDirectory };
    const vault = createVault(config);
    const redactor = new SecretRedactor();
    const learner = createSecretLearner(
      { vault, config, redactor },
      createLogger({ level: "silent", pretty: false }),
    );
    // No vault file yet: nothing to read.
    expect(learner.current()).toBe(true);
    await vault.set("deploy", "deploy-Secret-7e21c0d4");
    expect(learner.current()).toBe(false);
    await learner.refresh();
    expect(learner.current()).toBe(true);
    expect(redactor.redact("token deploy-Secret-7e21c0d4")).toBe("token [secret:deploy]");
  });
});
