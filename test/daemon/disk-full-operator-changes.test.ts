import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { textReply } from "../support/scripted-llm-server.js";
import { fillUp, health, mountSmallTmpfs, unmount } from "../support/small-disk.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

/**
 * An operator's changes (a named token, a memory, an agent switched off) on a full data_dir: each is refused as the store being full (507 STORAGE_FULL, what to do), never as a bug
 * of agentd (500 INTERNAL), and none is half made; once the disk takes writes again the same
 * changes go through and survive a restart.
 */
describe("an operator's changes on a full data_dir", () => {
  it("are refused with 507 STORAGE_FULL and /health degraded, then made and kept once it can", async (context) => {
    const { project } = await kit.scriptedProject(() => textReply("done"), {
      config: { store: { probe_interval: "150ms" } },
    });
    mkdirSync(project.dataDirectory, { recursive: true });
    if (!mountSmallTmpfs(project.dataDirectory, "4m")) {
      context.skip("cannot mount a tmpfs here (needs root): the test did not run");
      return;
    }
    kit.defer(() => unmount(project.dataDirectory));
    project.writeAgent("keeper", { memory: "write" });
    const daemon = await kit.daemon(project.configFile);
    const { version } = (await daemon.request("GET", "/agents/keeper/memory")).body as { version: string };
    const filler = path.join(project.dataDirectory, "filler");
    fillUp(filler);

    const changes = (): Promise<unknown[]> =>
      Promise.all([
        daemon.request("POST", "/tokens", { name: "reader", role: "read" }),
        daemon.request("PUT", "/agents/keeper/memory", { content: "- kept\n", version }),
        daemon.request("POST", "/agents/keeper/disable"),
      ]);
    const refused = { status: 507, body: { error: { code: "STORAGE_FULL", hint: expect.any(String) } } };
    expect(await changes()).toMatchObject([refused, refused, refused]);
    expect((await daemon.request("GET", "/tokens")).body).toMatchObject({ tokens: [] });
    expect((await daemon.request("GET", "/agents/keeper")).body).toMatchObject({ enabled: true });
    // A refused change is the daemon's full state, not one request's: /health says so.
    expect(await health(daemon)).toMatchObject({
      status: "degraded",
      reasons: [{ code: "STORAGE_FULL", error: "ENOSPC" }],
    });

    rmSync(filler);
    await waitFor(async () => (await health(daemon)).status === "ok", "GET /health ok");
    expect(await changes()).toMatchObject([{ status: 201 }, { status: 200 }, { status: 200 }]);
    await daemon.kill();
    const again = await kit.daemon(project.configFile);
    expect((await again.request("GET", "/tokens")).body).toMatchObject({ tokens: [{ name: "reader" }] });
    expect((await again.request("GET", "/agents/keeper/memory")).body).toMatchObject({ content: "- kept\n" });
    expect((await again.request("GET", "/agents/keeper")).body).toMatchObject({ enabled: false });
  });
});
