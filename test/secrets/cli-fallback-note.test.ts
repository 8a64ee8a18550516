import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { agentEvents, startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const FAKE_CLAUDE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/cli/claude");
const SECRET = "note-Secret-7e3a1f09c2";

const kit = useTestKit();

describe("the note a CLI tool's fallback model reads", () => {
  it(
    "masks a vault value the CLI tool said before it fell back to the LLM",
    { timeout: 90_000 },
    async () => {
      const { llm, project } = await kit.scriptedProject(textReply("finished by the LLM"), {
        config: {
          cli_tools: {
            claude: {
              command: FAKE_CLAUDE,
              // The tool is handed the value (its own credential, here) and repeats it.
              env: { FAKE_CLI_SCENARIO: "quota_after_saying", FAKE_CLI_SAY: "{{secret:deploy}}" },
            },
          },
        },
      });
      const set = await agentd(["secrets", "set", "deploy"], { cwd: project.root, input: SECRET });
      expect(set.exitCode, set.stderr).toBe(0);
      project.writeAgent("coder", {
        worker: "cli",
        cli: { tool: "claude", fallback: "llm" },
        workdir: "./work",
      });
      const daemon = await kit.daemon(project.configFile);
      const run = await startRun(daemon, "coder", "tidy the notes");
      expect(await waitForRunEnd(daemon, run)).toMatchObject({
        status: "completed",
        worker: "cli:claude→llm",
      });
      // What the CLI said is in the run's events, masked.
      const said = (await agentEvents(daemon, "coder")).filter((event) => event.type === "thought");
      expect(JSON.stringify(said)).toContain("I found [secret:deploy] in the notes.");
      // The fallback model continues from it, masked the same way.
      const asked = JSON.stringify(llm.chatRequests.map((request) => request.body));
      expect(asked).toContain('The CLI tool \\"claude\\" could not finish this task');
      expect(asked).toContain("I found [secret:deploy] in the notes.");
      expect(asked).not.toContain(SECRET);
    },
  );
});
