import { describe, expect, it } from "vitest";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { listRuns, postRunWithKey as postRun } from "./api-shapes.js";

const kit = useTestKit();

describe("POST /agents/:id/runs with an Idempotency-Key on one daemon", () => {
  it("makes one run per key and agent, also for requests at once and after kill -9", async () => {
    const llm = await kit.scriptedLlm();
    llm.setDefaultReply(textReply("done"));
    const project = kit.project({ llmUrl: llm.url });
    project.writeAgent("worker", {});
    project.writeAgent("other", {});
    const daemon = await kit.daemon(project.configFile);

    const first = await postRun(daemon, "worker", "key-1");
    expect(first.status).toBe(202);
    expect(first.body.duplicate).toBeUndefined();
    const again = await postRun(daemon, "worker", "key-1", "another task");
    expect(again).toMatchObject({ status: 200, body: { run: first.body.run, duplicate: true } });
    // Per agent: the same key of another agent is another run.
    const otherAgent = await postRun(daemon, "other", "key-1");
    expect(otherAgent.status).toBe(202);
    expect(otherAgent.body.run).not.toBe(first.body.run);

    // Ten at once with one key: one run, one 202.
    const burst = await Promise.all(Array.from({ length: 10 }, () => postRun(daemon, "worker", "key-2")));
    expect(burst.filter((reply) => reply.status === 202)).toHaveLength(1);
    expect(new Set(burst.map((reply) => reply.body.run)).size).toBe(1);

    await daemon.kill();
    const restarted = await kit.daemon(project.configFile);
    const afterKill = await postRun(restarted, "worker", "key-1");
    expect(afterKill).toMatchObject({ status: 200, body: { run: first.body.run, duplicate: true } });
    const runs = await listRuns(restarted, "?agent=worker");
    expect(runs).toHaveLength(2);
    expect(runs.find((run) => run.id === first.body.run)?.idempotency_key).toBe("key-1");
  });

  it("refuses a key that is too long or not printable, and documents the header and the 200", async () => {
    const llm = await kit.scriptedLlm();
    llm.setDefaultReply(textReply("done"));
    const project = kit.project({ llmUrl: llm.url });
    project.writeAgent("worker", {});
    const daemon = await kit.daemon(project.configFile);

    for (const key of ["k".repeat(256), "   ", "tab\there"]) {
      const reply = await postRun(daemon, "worker", key);
      expect(reply.status, key).toBe(400);
      expect(reply.body.error?.code).toBe("BAD_REQUEST");
    }
    expect((await postRun(daemon, "worker", "k".repeat(255))).status).toBe(202);
    expect(await listRuns(daemon, "?agent=worker")).toHaveLength(1);

    const document = (await daemon.request("GET", "/openapi.json")).body as {
      paths: Record<
        string,
        { post?: { parameters?: Array<{ in: string; name: string }>; responses: object } }
      >;
    };
    const startRun = document.paths["/agents/{id}/runs"]?.post;
    expect(
      startRun?.parameters?.some(
        (parameter) => parameter.in === "header" && parameter.name === "idempotency-key",
      ),
    ).toBe(true);
    expect(Object.keys(startRun?.responses ?? {})).toEqual(expect.arrayContaining(["200", "202"]));
  });
});
