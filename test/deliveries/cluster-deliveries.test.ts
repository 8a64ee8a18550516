import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRun } from "../daemon/api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();
/** Short, so the survivor takes over soon after the kill; the test waits on readiness, never on it. */
const LEASE_MILLISECONDS = 3_000;
const DELIVERY_SECRET = `whsec_${Buffer.from("cluster-delivery-key-0123456789").toString("base64")}`;
const HOOK_SECRET = "cluster-hook-secret-0123456789";

interface Attempt {
  ok: boolean;
  status_code?: number;
}
interface Delivery {
  id: string;
  run: string | null;
  status: string;
  attempts: Attempt[];
}
interface TargetStatus {
  agent: string | null;
  target: string;
  destination: string;
  health: string;
  last_error: string | null;
}

/**
 * Holds every node's change feed (`nodes` of them) in a read: an open transaction locks
 * `agentd_cli_cooldowns`, which the feed reads after the runs, and this waits until that many reads
 * wait on the lock. What the nodes commit meanwhile reaches no other node until `release`.
 */
async function holdChangeFeeds(url: string, nodes: number): Promise<{ release: () => Promise<void> }> {
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  await holder.query("BEGIN");
  await holder.query("LOCK TABLE agentd_cli_cooldowns IN ACCESS EXCLUSIVE MODE");
  // Asked on a connection of its own: a transaction sees pg_stat_activity as it was at its start.
  const watcher = new pg.Client({ connectionString: url });
  await watcher.connect();
  await waitFor(async () => {
    const waiting = await watcher.query<{ count: string }>(
      `SELECT count(*) AS count FROM pg_stat_activity
       WHERE wait_event_type = 'Lock' AND query LIKE '%FROM agentd_cli_cooldowns%'`,
    );
    return Number(waiting.rows[0]?.count) >= nodes ? true : undefined;
  }, "every node's change feed waiting on the held table");
  await watcher.end();
  return {
    release: async () => {
      await holder.query("COMMIT");
      await holder.end();
    },
  };
}

async function deliveriesOf(daemon: DaemonProcess, query = ""): Promise<Delivery[]> {
  const reply = await daemon.request("GET", `/deliveries${query}`);
  return (reply.body as { deliveries: Delivery[] }).deliveries;
}

/**
 * Deliveries and webhook rate limits on a cluster: two real daemons on one real PostgreSQL. Every
 * node answers the same deliveries and targets; a delivery whose node is killed (SIGKILL) while it
 * retries is sent by the other node, once; a trigger's rate limit holds across both nodes.
 */
describe.skipIf(missing !== undefined)("deliveries and triggers on a cluster", { timeout: 180_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;
  let database: pg.Client;
  let server: Server;
  let receiverUrl = "";
  /** The receiver answers 500 while down; each request is kept with its webhook-id and answer. */
  let down = true;
  const received: Array<{ id: string; status: number; body: string; headers: Record<string, string> }> = [];

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = "";
      request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      request.on("end", () => {
        const status = down ? 500 : 200;
        const headers = Object.fromEntries(
          Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
        );
        received.push({ id: headers["webhook-id"] ?? "", status, body, headers });
        response.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/agentd?token=receiver-token`;
    cluster = await startPostgresCluster(kit, {
      nodes: 2,
      lease: LEASE_MILLISECONDS,
      reply: textReply("the digest"),
      config: () => ({ vault: { backend: "env" } }),
      environment: () => ({
        AGENTD_SECRET_DIGEST_HOOK: DELIVERY_SECRET,
        AGENTD_SECRET_POKE_HOOK: HOOK_SECRET,
      }),
      agents: (project) => {
        project.writeAgent("digest", {
          deliver: [{ to: "webhook", url: receiverUrl, secret: "{{secret:digest_hook}}" }],
        });
        project.writeAgent("poked", {
          triggers: [
            {
              webhook: "poke",
              secret: "{{secret:poke_hook}}",
              signature: "bearer",
              rate_limit: { runs: 1, per: "1h" },
            },
          ],
        });
      },
    });
    database = new pg.Client({ connectionString: cluster.postgres.url });
    await database.connect();
  }, 120_000);

  afterAll(async () => {
    await database?.end().catch(() => undefined);
    await new Promise((resolve) => {
      server?.close(resolve);
      server?.closeAllConnections();
    });
  });

  it("holds a webhook trigger's rate limit across the nodes", async () => {
    const poke = (daemon: DaemonProcess, id: string) =>
      fetch(`${daemon.url}/hooks/poked/poke`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${HOOK_SECRET}`,
          "idempotency-key": id,
        },
        body: "{}",
      });
    const [first, second] = cluster.nodes as [DaemonProcess, DaemonProcess];
    // The second node has not heard of the first's run yet (its change feed lags, as on a busy
    // node): the feeds are held at a table they read after the runs, until the end.
    const hold = await holdChangeFeeds(cluster.postgres.url, cluster.nodes.length);
    try {
      expect((await poke(first, "one")).status).toBe(202);
      // The other node counts the start the first one took: one run per hour between them.
      const refused = await poke(second, "two");
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(3_000);
      // A duplicate costs nothing and is still answered as one on either node, known or not.
      const duplicate = await poke(second, "one");
      expect(duplicate.status).toBe(200);
      expect(await duplicate.json()).toMatchObject({ duplicate: true });
    } finally {
      await hold.release();
    }
    expect((await poke(second, "one")).status).toBe(200);
  });

  it("lists every node's deliveries on each node and sends a killed node's pending delivery once", async () => {
    const [first, second] = cluster.nodes as [DaemonProcess, DaemonProcess];
    const runId = await startRun(first, "digest", "write the digest");
    // Readiness: the first attempt failed (500) and the retry is stored.
    const holder = await waitFor(async () => {
      const rows = await database.query<{ claimed_by: string; status: string }>(
        "SELECT claimed_by, status FROM agentd_deliveries WHERE agent = 'digest'",
      );
      const row = rows.rows[0];
      return row?.status === "retrying" ? row.claimed_by : undefined;
    }, "the delivery retrying, stored");

    // Both nodes answer the same list, whichever made the delivery.
    const seen = await Promise.all([deliveriesOf(first), deliveriesOf(second)]);
    expect(seen[0].map((delivery) => delivery.id)).toEqual(seen[1].map((delivery) => delivery.id));
    expect(seen[0].map((delivery) => [delivery.run, delivery.status])).toEqual([[runId, "retrying"]]);
    const [targetsOnFirst, targetsOnSecond] = await Promise.all(
      [first, second].map(async (daemon) => {
        const reply = await daemon.request("GET", "/deliveries/targets");
        expect(reply.status).toBe(200);
        return (reply.body as { targets: TargetStatus[] }).targets;
      }),
    );
    // The same targets and health on both (the holder may know of an attempt more than the store).
    const shown = (targets: TargetStatus[]) =>
      targets.map(({ agent, target, destination, health }) => ({ agent, target, destination, health }));
    expect(shown(targetsOnFirst ?? [])).toEqual(shown(targetsOnSecond ?? []));
    expect(targetsOnFirst).toEqual([
      expect.objectContaining({
        agent: "digest",
        target: "webhook#0",
        // The receiver's path and query may hold a token: only its origin is shown.
        destination: `${new URL(receiverUrl).origin}/…`,
        health: "retrying",
        last_error: expect.stringContaining("500"),
      }),
    ]);
    expect(JSON.stringify(targetsOnFirst)).not.toContain("receiver-token");

    const victim = cluster.nodeWithId(holder);
    const survivor = victim === first ? second : first;
    await victim.kill();
    down = false;
    const [delivered] = await waitFor(async () => {
      const listed = await deliveriesOf(survivor, `?run=${runId}`);
      return listed[0]?.status === "sent" ? listed : undefined;
    }, "the delivery sent by the node that took it over");
    const codes = delivered?.attempts.map((attempt) => attempt.status_code) ?? [];
    expect(codes.at(-1)).toBe(200);
    expect(codes.slice(0, -1).every((code) => code === 500)).toBe(true);
    expect(codes.length).toBeGreaterThanOrEqual(2);

    // Once: one request of that webhook-id was answered 200, and it verifies.
    const mine = received.filter((request) => request.id === delivered?.id);
    expect(mine.filter((request) => request.status === 200)).toHaveLength(1);
    const accepted = mine.find((request) => request.status === 200);
    expect(new Webhook(DELIVERY_SECRET).verify(accepted?.body ?? "", accepted?.headers ?? {})).toMatchObject({
      type: "run.completed",
      data: expect.objectContaining({ run: runId }),
    });
    const rows = await database.query<{ claimed_by: string }>(
      "SELECT claimed_by FROM agentd_deliveries WHERE id = $1",
      [delivered?.id],
    );
    expect(rows.rows[0]?.claimed_by).not.toBe(holder);
  });
});
