import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { getRun, startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const kit = useTestKit();

const EARLY = "early-Secret-4c1d9e7a";
const LATE = "late-Secret-0b8f3a62e5";

describe("a run's task as the model reads it", () => {
  it(
    "is masked with a secret set while the daemon runs, as the run's record is",
    { timeout: 90_000 },
    async () => {
      const { llm, project } = await kit.scriptedProject(textReply("ok"));
      const early = await agentd(["secrets", "set", "early"], { cwd: project.root, input: EARLY });
      expect(early.exitCode, early.stderr).toBe(0);
      project.writeAgent("plain", {});
      const daemon = await kit.daemon(project.configFile);
      // A first run: the daemon has read the vault as it stood.
      await waitForRunEnd(daemon, await startRun(daemon, "plain", `first ${EARLY}`));

      // The operator adds a secret, then a caller's task quotes its value (a pasted log, a webhook).
      const late = await agentd(["secrets", "set", "late"], { cwd: project.root, input: LATE });
      expect(late.exitCode, late.stderr).toBe(0);
      const run = await startRun(daemon, "plain", `deploy with ${LATE}`);
      expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });

      expect((await getRun(daemon, run)).task).toBe("deploy with [secret:late]");
      const userMessages = llm.chatRequests.flatMap((request) =>
        (request.body?.messages ?? [])
          .filter((message) => message.role === "user")
          .map((message) => String(message.content)),
      );
      expect(userMessages).toEqual(["first [secret:early]", "deploy with [secret:late]"]);
    },
  );

  it(
    "masks a vault value an agent file's prompt holds, with and without memory, and in the API",
    { timeout: 90_000 },
    async () => {
      const { llm, project } = await kit.scriptedProject(textReply("ok"));
      const set = await agentd(["secrets", "set", "early"], { cwd: project.root, input: EARLY });
      expect(set.exitCode, set.stderr).toBe(0);
      project.writeAgent("bare.md", `---\nname: bare\ndescription: d\n---\nLog in with ${EARLY}.\n`);
      project.writeAgent(
        "remembering.md",
        `---\nname: remembering\ndescription: d\nmemory: read\n---\nLog in with ${EARLY}.\n`,
      );
      const daemon = await kit.daemon(project.configFile);
      for (const agent of ["bare", "remembering"]) {
        await waitForRunEnd(daemon, await startRun(daemon, agent, "log in"));
      }
      const systemPrompts = llm.chatRequests.map((request) =>
        String(request.body?.messages.find((message) => message.role === "system")?.content),
      );
      expect(systemPrompts).toHaveLength(2);
      for (const prompt of systemPrompts) {
        expect(prompt).toContain("Log in with [secret:early].");
        expect(prompt).not.toContain(EARLY);
      }
      // GET /agents/:id, open to a read token, shows the prompt as the model reads it.
      const shown = JSON.stringify((await daemon.request("GET", "/agents/bare")).body);
      expect(shown).toContain("Log in with [secret:early].");
      expect(shown).not.toContain(EARLY);
    },
  );

  // The first record of a run goes to the open-runs journal, which is append-only.
  it(
    "keeps a secret set while the daemon runs out of the open-runs journal",
    { timeout: 90_000 },
    async () => {
      const { project } = await kit.scriptedProject(textReply("ok"));
      const early = await agentd(["secrets", "set", "early"], { cwd: project.root, input: EARLY });
      expect(early.exitCode, early.stderr).toBe(0);
      project.writeAgent("plain", {});
      const daemon = await kit.daemon(project.configFile);
      await waitForRunEnd(daemon, await startRun(daemon, "plain", "first"));
      const late = await agentd(["secrets", "set", "late"], { cwd: project.root, input: LATE });
      expect(late.exitCode, late.stderr).toBe(0);
      await waitForRunEnd(daemon, await startRun(daemon, "plain", `deploy with ${LATE}`));
      const holding = readdirSync(project.dataDirectory, { recursive: true, encoding: "utf8" }).filter(
        (file) => {
          const full = path.join(project.dataDirectory, file);
          return (
            !file.startsWith("vault") &&
            statSync(full).isFile() &&
            readFileSync(full, "latin1").includes(LATE)
          );
        },
      );
      expect(holding).toEqual([]);
    },
  );
});
