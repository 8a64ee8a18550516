import { describe, expect, it } from "vitest";
import type { AuditEntry } from "../../src/access/audit-entry.js";
import { getRun, runEvents, startRun } from "../daemon/api-shapes.js";
import { startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();

describe.skipIf(missing !== undefined)("a stop forwarded across a cluster", { timeout: 240_000 }, () => {
  const kit = useTestKit();

  it("is audited with the token's name on the node asked, and the run on the other node ends stopped", async () => {
    const cluster = await startPostgresCluster(kit, {
      nodes: 2,
      reply: (request) =>
        JSON.stringify(request.body?.messages ?? []).includes("hang forever")
          ? { type: "hang" }
          : textReply("done"),
      agents: (project, index) => {
        // Only the first node has the agent: its run can only run there.
        if (index === 0) project.writeAgent("holder", {});
      },
    });
    const [first, second] = cluster.nodes;
    if (first === undefined || second === undefined) throw new Error("the cluster has two nodes");
    const run = await startRun(first, "holder", "hang forever");
    await waitFor(async () => {
      const record = await getRun(second, run);
      return record.status === "running" && record.node === cluster.ids[0];
    }, "the run running on the first node");

    // A named token of role run, made on the second node, stops the run from there.
    const created = await second.request("POST", "/tokens", { name: "stopper", role: "run" });
    expect(created.status).toBe(201);
    const token = (created.body as { token: string }).token;
    const stop = await fetch(`${second.url}/runs/${run}/stop`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(stop.status).toBe(200);
    const stopped = await waitFor(async () => {
      const record = await getRun(first, run);
      return record.status === "stopped" && record;
    }, "the run stopped on its node");
    expect(stopped).toMatchObject({ reason: "user_stop", node: cluster.ids[0] });

    // One trail for the cluster: either node reads the stop, recorded where it was asked.
    for (const node of [first, second]) {
      const trail = (await node.request("GET", "/audit?limit=1000")).body as { entries: AuditEntry[] };
      expect(trail.entries.filter((entry) => entry.run === run).map((entry) => entry.action)).toEqual([
        "run.start",
        "run.stop",
      ]);
      expect(trail.entries.find((entry) => entry.run === run && entry.action === "run.stop")).toMatchObject({
        actor: { kind: "token", name: "stopper" },
        agent: "holder",
        node: cluster.ids[1],
      });
    }
    // The run's own events carry who stopped it.
    const audits = await waitFor(async () => {
      const found = (await runEvents(first, run)).flatMap((event) =>
        event.type === "audit"
          ? [`${event.data.action} ${event.data.actor.kind}:${event.data.actor.name}`]
          : [],
      );
      return found.length === 2 && found;
    }, "the run's audit events");
    expect(audits).toEqual(["run.start token:default", "run.stop token:stopper"]);
  });
});
