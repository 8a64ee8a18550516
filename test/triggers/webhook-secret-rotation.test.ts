import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { textReply } from "../support/scripted-llm-server.js";
import { waitFor } from "../support/wait-for.js";

const VAULT_KEY = "2c".repeat(32);
const LEAKED = "leaked-hook-secret-value-0123456789";
const ROTATED = "rotated-hook-secret-value-9876543210";

const scripted = useScriptedDaemon({
  reply: textReply("seen"),
  config: { vault: { backend: "file" } },
  environment: { AGENTD_VAULT_KEY: VAULT_KEY },
  agents: (project) => {
    project.writeAgent("ci", {
      triggers: [
        {
          webhook: "build",
          secret: "{{secret:build_hook}}",
          signature: "bearer",
          // Only `{"start": true}` starts a run: the probes below are verified, then skipped.
          filter: { start: true },
        },
        { webhook: "deploy", secret: "{{secret:deploy_hook}}", signature: "bearer", filter: { start: true } },
      ],
    });
  },
});

/** `agentd secrets <args>` in the project, as its operator types it (no daemon involved). */
async function secrets(args: string[], input?: string): Promise<void> {
  const done = await agentd(["--config", scripted.project.configFile, "secrets", ...args], {
    environment: { AGENTD_VAULT_KEY: VAULT_KEY },
    ...(input === undefined ? {} : { input }),
  });
  expect(done.exitCode, done.stderr).toBe(0);
}

/** A delivery with `secret` that passes verification only: 200 skipped when it verifies, 401 if not. */
async function probe(secret: string, trigger = "build"): Promise<number> {
  const response = await fetch(`${scripted.daemon.url}/hooks/ci/${trigger}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ start: false, at: Math.random() }),
  });
  await response.body?.cancel();
  return response.status;
}

/**
 * A webhook secret that leaked is rotated with `agentd secrets set` while the daemon runs: the old
 * value must stop opening the hook without a restart, and a removed secret must close it.
 */
describe("a webhook secret changed in the vault while the daemon runs", { timeout: 120_000 }, () => {
  it("stops taking the old value and takes the new one; a removed secret closes the hook", async () => {
    await secrets(["set", "build_hook"], LEAKED);
    await waitFor(async () => (await probe(LEAKED)) === 200 || undefined, "the first secret taken", 60_000);

    // A second secret set later is found too (the vault is read again after each delivery found one missing).
    await secrets(["set", "deploy_hook"], ROTATED);
    await waitFor(
      async () => (await probe(ROTATED, "deploy")) === 200 || undefined,
      "the second secret taken",
      60_000,
    );

    await secrets(["set", "build_hook"], ROTATED);
    await waitFor(async () => (await probe(LEAKED)) === 401 || undefined, "the leaked value refused", 60_000);
    expect(await probe(ROTATED)).toBe(200);

    await secrets(["rm", "build_hook"]);
    await waitFor(
      async () => (await probe(ROTATED)) === 401 || undefined,
      "the removed secret refused",
      60_000,
    );
  });
});
