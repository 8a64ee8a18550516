import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Credential, clientCall } from "../support/client-call.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();

/** The status of a GET with a bearer token or a browser's cookie to one node. */
async function statusOf(node: DaemonProcess, urlPath: string, credential: Credential): Promise<number> {
  return (await clientCall(node.url, "GET", urlPath, credential)).status;
}

/** A token revoked on one node of a cluster: two real daemons, one PostgreSQL. */
describe.skipIf(missing !== undefined)("a token revoked on a cluster", { timeout: 180_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;

  beforeAll(async () => {
    cluster = await startPostgresCluster(kit, {
      nodes: 2,
      reply: textReply("done"),
      agents: (project) => project.writeAgent("worker", { task: "work" }),
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all((cluster?.nodes ?? []).map((node) => node.kill()));
  }, 60_000);

  it("stops working on the other node within seconds: bearer, browser session and open stream", async () => {
    const [first, second] = cluster.nodes as [DaemonProcess, DaemonProcess];
    const created = await first.request("POST", "/tokens", { name: "ops", role: "admin" });
    expect(created.status).toBe(201);
    const token = (created.body as { token: string }).token;
    await waitFor(
      async () => (await statusOf(second, "/audit", { token })) === 200 || undefined,
      "the other node to accept the new token",
    );
    const login = await fetch(`${second.url}/auth/login?token=${encodeURIComponent(token)}`, {
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const controller = new AbortController();
    const stream = await fetch(`${second.url}/agents/worker/events/stream`, {
      headers: { authorization: `Bearer ${token}` },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();

    // Revoked on the first node, and the name given at once to a token of a lesser role.
    expect((await first.request("DELETE", "/tokens/ops")).status).toBe(200);
    expect((await first.request("POST", "/tokens", { name: "ops", role: "read" })).status).toBe(201);

    const cutOff = setTimeout(() => controller.abort(), 20_000);
    try {
      while (!(await reader.read()).done);
    } finally {
      clearTimeout(cutOff);
    }
    expect(controller.signal.aborted, "the stream on the other node was open 20 s later").toBe(false);
    expect(await statusOf(second, "/runs", { token })).toBe(401);
    expect(await statusOf(second, "/audit", { cookie })).toBe(401);
    expect(await statusOf(second, "/runs", { cookie })).toBe(401);
  });
});
