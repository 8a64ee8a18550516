import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

const VALUE = "detail-Secret-7e21c0d94b";

describe("GET /agents/:id, open to any read token", () => {
  it(
    "masks a vault value wherever the agent file holds it, from the daemon's first answer on",
    { timeout: 90_000 },
    async () => {
      const { project } = await kit.scriptedProject(textReply("ok"));
      const set = await agentd(["secrets", "set", "token"], { cwd: project.root, input: VALUE });
      expect(set.exitCode, set.stderr).toBe(0);
      // An operator's rule that lets one exact command with its token through, without asking.
      project.writeAgent("caller", {
        tools: ["shell"],
        permissions: { allow: [`shell(curl -H 'X-Token: ${VALUE}' https://example.com/*)`] },
      });
      // Asked as soon as the daemon answers: no run has made it read the vault yet.
      const daemon = await kit.daemon(project.configFile);
      const shown = JSON.stringify((await daemon.request("GET", "/agents/caller")).body);
      expect(shown).toContain("shell(curl -H 'X-Token: [secret:token]' https://example.com/*)");
      expect(shown).not.toContain(VALUE);
    },
  );
});
