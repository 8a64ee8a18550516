import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { closedPort } from "../support/closed-port.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { startRun, waitForRunEnd } from "./api-shapes.js";

const kit = useTestKit();

describe("a data_dir whose audit folder is a file", () => {
  it("answers every run start, and exits 0 on SIGTERM instead of spinning", async () => {
    // The model server is gone too (a closed port): each run fails at its first model request.
    const project = kit.project({
      llmUrl: `http://127.0.0.1:${await closedPort()}/v1`,
      config: { shutdown: { grace: "2s" } },
    });
    project.writeAgent("writer", {});
    mkdirSync(project.dataDirectory, { recursive: true });
    writeFileSync(path.join(project.dataDirectory, "audit"), "not a folder\n");
    const daemon = await kit.daemon(project.configFile);

    // Before the synced-append fix the second start was never answered; at shutdown, closing the
    // audit trail then awaited a settled flush in a loop of microtasks: 100% CPU, no timer, no
    // second signal, never an exit.
    const runs = [];
    for (const task of ["one", "two", "three"]) runs.push(await startRun(daemon, "writer", task));
    for (const run of runs) expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "failed" });

    daemon.signal("SIGTERM");
    await waitFor(
      async () => (daemon.stderr().includes("shutting down") ? true : undefined),
      "shutdown to begin",
    );
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
  });
});
