import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryTargetSchema } from "../../src/config/delivery-settings.js";
import { ClusterDeliveryStore } from "../../src/deliveries/cluster-delivery-store.js";
import { DeliveryService } from "../../src/deliveries/delivery-service.js";
import { EventBus } from "../../src/events/event-bus.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import type { DurableStore } from "../../src/store/durable-store.js";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { EnvVault } from "../../src/vault/env-vault.js";
import { makeDefinition } from "../support/make-definition.js";
import { ManualClock } from "../support/manual-clock.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";
import { waitFor } from "../support/wait-for.js";

const logger = pino({ level: "silent" });
const missing = postgresMissingReason();

/**
 * Deliveries on a cluster: a delivery made on a node that then leaves (or dies: its lease lapses,
 * the same to the claim) is taken over by exactly one other node, which sends it.
 */
describe.skipIf(missing !== undefined)("deliveries in the PostgreSQL store", { timeout: 120_000 }, () => {
  let postgres: PostgresServer;
  let server: Server;
  let receiverUrl: string;
  const received: string[] = [];
  /** The receiver is down (500) until the test lets it answer. */
  let answering = false;
  const stores: DurableStore[] = [];
  const services: DeliveryService[] = [];

  beforeAll(async () => {
    postgres = await startPostgres();
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = "";
      request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      request.on("end", () => {
        received.push(body);
        response.writeHead(answering ? 200 : 500).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  }, 60_000);

  afterAll(async () => {
    for (const service of services) await service.close();
    for (const store of stores) await store.close().catch(() => undefined);
    await new Promise((resolve) => server?.close(resolve));
    await postgres?.stop();
  });

  async function node(clock: ManualClock) {
    const store = await openPostgresStore({
      url: postgres.url,
      leaseMilliseconds: 30_000,
      bufferSize: 100,
      logger,
      now: () => new Date(),
    });
    stores.push(store);
    await store.start();
    if (!store.deliveries) throw new Error("the PostgreSQL store keeps no deliveries");
    const definition = makeDefinition({ id: "digest", workdir: "/tmp" });
    const service = new DeliveryService({
      store: new ClusterDeliveryStore(store.deliveries),
      events: new EventBus({ now: () => new Date(clock.now()) }),
      clock,
      vault: new EnvVault({}),
      redactor: new SecretRedactor(),
      config: { targets: {} },
      definitionOf: (agent) => (agent === "digest" ? definition : undefined),
      placeOf: () => ({ workdir: "/tmp", sandbox: { mode: "off" } as never }),
      logger,
    });
    services.push(service);
    await service.start();
    return { store, service };
  }

  it("hands the open delivery of a node that left to exactly one other node, which sends it", async () => {
    const clock = new ManualClock(Date.now());
    const first = await node(clock);
    const second = await node(clock);
    const third = await node(clock);
    const made = await first.service.deliver({
      agent: "digest",
      run: "r_1",
      when: "always",
      target: {
        name: "slack#0",
        target: DeliveryTargetSchema.parse({ to: "slack", url: receiverUrl }),
        shared: false,
      },
      facts: { agent: "digest", run: "r_1", status: "completed", when: "always", result: "the digest" },
    });
    // The first attempt fails (500): retrying, its next attempt a second away on a clock not moved.
    await waitFor(() => first.service.list("retrying").length === 1, "the first attempt failed");
    expect(received).toHaveLength(1);
    // Another node does not take a delivery whose node is alive.
    expect(await second.service.adopt()).toBe(0);

    // The first node stops before its next attempt: its deliveries stay open in the store.
    await first.service.close();
    await first.store.close();
    answering = true;
    clock.advanceBy(5_000);
    const taken = await Promise.all([second.service.adopt(), third.service.adopt()]);
    // One of the two took it, the other nothing (whichever won: read before sorting a copy).
    expect([...taken].sort()).toEqual([0, 1]);
    const taker = taken[0] === 1 ? second : third;
    const other = taken[0] === 1 ? third : second;
    await waitFor(
      () => taker.service.list("sent").length === 1,
      "the delivery sent by the node that took it",
    );
    const sent = taker.service.list("sent")[0];
    expect(sent?.id).toBe(made?.id);
    expect(sent?.attempts.map((attempt) => attempt.status_code)).toEqual([500, 200]);
    expect(received).toHaveLength(2);
    // Sent once: nobody takes it again, and the other node never had it.
    expect(await other.service.adopt()).toBe(0);
    expect(await taker.service.adopt()).toBe(0);
    expect(other.service.list()).toEqual([]);
    await taker.service.idle();
    expect(received).toHaveLength(2);
  });
});
