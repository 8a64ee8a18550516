import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { createVault } from "../../src/vault/create-vault.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { agentEvents, getRun, startRun } from "./api-shapes.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

const API_KEY = "sk-test-7f3a9c2e5b1d";

describe("config secrets in the daemon", () => {
  it("resolves {{secret:name}} from the vault for the LLM and masks the value in runs, events and logs", async () => {
    const { llm, project: workspace } = await kit.scriptedProject(textReply(`the key is ${API_KEY}`), {
      config: { vault: { backend: "env" } },
    });
    const configText = readFileSync(workspace.configFile, "utf8").replace(
      "api_key: test-key",
      'api_key: "{{secret:llm_key}}"',
    );
    writeFileSync(workspace.configFile, configText);
    workspace.writeAgent("leaky", {});
    const daemon = await kit.daemon(workspace.configFile, {
      environment: { AGENTD_SECRET_LLM_KEY: API_KEY },
    });

    const run = await startRun(daemon, "leaky", "tell me the key");
    const record = await waitFor(async () => {
      const current = await getRun(daemon, run);
      return current.status === "completed" ? current : undefined;
    }, "the run to complete");
    const [request] = await llm.waitForChatRequests(1);
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(record.result).toBe("the key is [secret:llm_key]");
    const events = JSON.stringify(await agentEvents(daemon, "leaky"));
    expect(events).toContain("[secret:llm_key]");
    expect(events).not.toContain(API_KEY);
    const runsDirectory = path.join(workspace.dataDirectory, "runs");
    // Records, run logs, the run index and the open-runs journal (in their own folders).
    const files = readdirSync(runsDirectory, { recursive: true, withFileTypes: true }).filter((entry) =>
      entry.isFile(),
    );
    expect(files.length).toBeGreaterThan(2);
    for (const file of files) {
      expect(readFileSync(path.join(file.parentPath, file.name), "utf8")).not.toContain(API_KEY);
    }
    expect(daemon.stderr()).not.toContain(API_KEY);
  });

  it("masks vault values no agent declares, including one set while the daemon runs", async () => {
    const early = "early-value-91c4e7";
    const late = "late-value-5d20af";
    const vaultKey = "0f".repeat(32);
    const llm = await kit.scriptedLlm();
    const workspace = kit.project({ llmUrl: llm.url });
    workspace.writeAgent("talker", {});
    const vault = createVault(ConfigSchema.parse({ data_dir: workspace.dataDirectory }), {
      AGENTD_VAULT_KEY: vaultKey,
    });
    await vault.set("early", early);
    const daemon = await kit.daemon(workspace.configFile, { environment: { AGENTD_VAULT_KEY: vaultKey } });

    const finished = async (task: string) => {
      const run = await startRun(daemon, "talker", task);
      return waitFor(async () => {
        const current = await getRun(daemon, run);
        return current.status === "completed" ? current : undefined;
      }, "the run to complete");
    };
    llm.enqueue(textReply(`I found ${early} in a file`));
    expect((await finished("first")).result).toBe("I found [secret:early] in a file");

    // `agentd secrets set` while the daemon runs: the next run already masks the new value.
    await vault.set("late", late);
    llm.enqueue(textReply(`now ${late} and ${early}`));
    expect((await finished("second")).result).toBe("now [secret:late] and [secret:early]");
    // A task that holds a value is recorded masked from the first record on.
    llm.enqueue(textReply("done"));
    const posted = await finished(`use ${late} once`);
    expect(posted.task).toBe("use [secret:late] once");
    expect(posted.id).toMatch(/^r_[0-9a-z]{21}$/);
    // Its queued record, in the run index and the open-runs journal, was masked too.
    const runsDirectory = path.join(workspace.dataDirectory, "runs");
    for (const folder of ["index", "open"]) {
      for (const file of readdirSync(path.join(runsDirectory, folder))) {
        expect(readFileSync(path.join(runsDirectory, folder, file), "utf8")).not.toContain(late);
      }
    }
    const events = JSON.stringify(await agentEvents(daemon, "talker"));
    expect(events).not.toContain(early);
    expect(events).not.toContain(late);
  });

  it("keeps an API key given as ${VAR} from the agents' shells and masks it", async () => {
    const key = "sk-from-environment-8d2b61";
    const llm = await kit.scriptedLlm();
    const workspace = kit.project({ llmUrl: llm.url });
    writeFileSync(
      workspace.configFile,
      readFileSync(workspace.configFile, "utf8").replace("api_key: test-key", "api_key: ${MY_LLM_KEY}"),
    );
    workspace.writeAgent("printer", { tools: ["shell"], permissions: { allow: ["shell"] } });
    const daemon = await kit.daemon(workspace.configFile, { environment: { MY_LLM_KEY: key } });
    llm.enqueue(toolCallReply({ name: "shell", arguments: { command: "env; echo end-of-env" } }));
    llm.enqueue(textReply(`done, the key was ${key}`));

    const run = await startRun(daemon, "printer", "print the environment");
    const record = await waitFor(async () => {
      const current = await getRun(daemon, run);
      return current.status === "completed" ? current : undefined;
    }, "the run to complete");
    expect(record.result).toBe("done, the key was [secret:llm.api_key]");
    const requests = await llm.waitForChatRequests(2);
    expect(requests[0]?.headers.authorization).toBe(`Bearer ${key}`);
    const toolResult = JSON.stringify(requests[1]?.body?.messages.at(-1));
    expect(toolResult).toContain("end-of-env");
    expect(toolResult).not.toContain(key);
    expect(toolResult).not.toContain("MY_LLM_KEY");
    expect(JSON.stringify(await agentEvents(daemon, "printer"))).not.toContain(key);
  });
});
