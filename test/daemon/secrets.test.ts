import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startDaemonProcess } from "../support/daemon-process.js";
import { startScriptedLlmServer, textReply } from "../support/scripted-llm-server.js";
import { agentEvents, getRun, startRun } from "./api-shapes.js";
import { createWorkspace, waitFor } from "./daemon-workspace.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const API_KEY = "sk-test-7f3a9c2e5b1d";

describe("config secrets in the daemon", () => {
  it("resolves {{secret:name}} from the vault for the LLM and masks the value in runs, events and logs", async () => {
    const llm = await startScriptedLlmServer();
    cleanups.push(() => llm.close());
    llm.setDefaultReply(textReply(`the key is ${API_KEY}`));
    const workspace = createWorkspace(llm.url, { vault: { backend: "env" } });
    const configText = readFileSync(workspace.configFile, "utf8").replace(
      "api_key: test-key",
      'api_key: "{{secret:llm_key}}"',
    );
    writeFileSync(workspace.configFile, configText);
    workspace.writeAgent("leaky", {});
    const daemon = await startDaemonProcess({
      configFile: workspace.configFile,
      environment: { AGENTD_SECRET_LLM_KEY: API_KEY },
    });
    cleanups.push(() => daemon.kill());

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
    for (const file of readdirSync(runsDirectory)) {
      expect(readFileSync(path.join(runsDirectory, file), "utf8")).not.toContain(API_KEY);
    }
    expect(daemon.stderr()).not.toContain(API_KEY);
  });
});
