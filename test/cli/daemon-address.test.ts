import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

describe("the CLI's way to the daemon", { timeout: 90_000 }, () => {
  it("finds a daemon started with server.port 0 by the port it took, with no AGENTD_URL", async () => {
    const workspace = kit.project({ llmUrl: "http://127.0.0.1:9/v1" });
    workspace.writeAgent("greeter", {});
    const daemon = await kit.daemon(workspace.configFile);
    const agents = await agentd(["agents", "--json", "--config", workspace.configFile]);
    expect(agents.exitCode, agents.stderr).toBe(0);
    expect(agents.stdout).toContain('"greeter"');
    const events = await agentd(["events", "greeter", "--config", workspace.configFile]);
    expect(events.exitCode, events.stderr).toBe(0);
    // Once the daemon is gone, the CLI says where it looked: the configured address.
    daemon.signal("SIGTERM");
    await daemon.exited;
    const gone = await agentd(["events", "greeter", "--config", workspace.configFile]);
    expect(gone.exitCode).toBe(1);
    expect(gone.stderr).toContain("no agentd daemon at http://127.0.0.1:0");
  });
});
