import { mkdtempSync, rmSync } from "node:fs";
import { type ServerResponse, createServer } from "node:http";
import { type AddressInfo, type Socket, createServer as createTcpServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type DeliveriesConfig, DeliveryTargetSchema } from "../../src/config/delivery-settings.js";
import { MAX_ATTEMPTS_PER_TARGET } from "../../src/deliveries/attempt-slots.js";
import { DeliveryService } from "../../src/deliveries/delivery-service.js";
import { FilesDeliveryStore } from "../../src/deliveries/files-delivery-store.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { EnvVault } from "../../src/vault/env-vault.js";
import { ManualClock } from "../support/manual-clock.js";
import { waitFor } from "../support/wait-for.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A Slack-like receiver that holds every request until the test lets it answer. */
async function heldReceiver() {
  const held: Array<{ body: string; response: ServerResponse }> = [];
  let open = 0;
  let mostOpen = 0;
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      open++;
      mostOpen = Math.max(mostOpen, open);
      response.on("finish", () => open--);
      held.push({ body, response });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    mostOpen: () => mostOpen,
    answerAll: () => {
      for (const request of held.splice(0)) request.response.writeHead(200).end("ok");
    },
  };
}

/**
 * An SMTP server that greets, then answers EHLO with a continuation line every 50 ms and never
 * its last line: no timeout of nodemailer (each between two bytes or replies) ever fires.
 */
async function tricklingSmtpServer() {
  const sockets: Socket[] = [];
  const server = createTcpServer((socket) => {
    sockets.push(socket);
    socket.on("error", () => undefined);
    socket.write("220 mail.example.test ESMTP\r\n");
    let timer: NodeJS.Timeout | undefined;
    socket.once("data", () => {
      timer = setInterval(() => socket.write("250-still thinking\r\n"), 50);
    });
    socket.on("close", () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as AddressInfo).port, sockets };
}

function deliveryService(config: Partial<DeliveriesConfig> = {}) {
  const folder = mkdtempSync(path.join(tmpdir(), "agentd-slots-"));
  const clock = new ManualClock(Date.now());
  const logger = createLogger({ level: "silent", pretty: false });
  const service = new DeliveryService({
    store: new FilesDeliveryStore({ dataDirectory: folder, logger, now: () => clock.now() }),
    events: new EventBus({ now: () => new Date(clock.now()) }),
    clock,
    vault: new EnvVault({}),
    redactor: new SecretRedactor(),
    config: { targets: {}, ...config },
    definitionOf: () => undefined,
    placeOf: () => {
      throw new Error("no file targets here");
    },
    logger,
  });
  cleanups.push(async () => {
    await service.close();
    rmSync(folder, { recursive: true, force: true });
  });
  return { service, clock };
}

describe("many deliveries due at once", () => {
  it("send a few at a time to one target, never holding up another target", async () => {
    const chat = await heldReceiver();
    const other = await heldReceiver();
    const { service } = deliveryService();
    await service.start();
    const deliver = (url: string, name: string, run: number) =>
      service.deliver({
        agent: "digest",
        run: `r_${run}`,
        when: "always",
        target: {
          name,
          target: DeliveryTargetSchema.parse({ to: "slack", url: `${url}/hook` }),
          shared: false,
        },
        facts: {
          agent: "digest",
          run: `r_${run}`,
          status: "completed",
          when: "always",
          result: `run ${run}`,
        },
      });
    for (let run = 0; run < 30; run++) await deliver(chat.url, "team-chat", run);
    await waitFor(() => chat.held.length === MAX_ATTEMPTS_PER_TARGET, "the first attempts");
    // The first made go first.
    const firstRuns = chat.held.map((request) => /run (\d+)/.exec(request.body)?.[1]).sort();
    expect(firstRuns).toEqual(["0", "1", "2", "3"]);
    // The busy target's queue does not stand in front of another target.
    await deliver(other.url, "alerts", 99);
    await waitFor(() => other.held.length === 1, "the other target's delivery");
    other.answerAll();
    let answered = 0;
    while (answered < 30) {
      await waitFor(() => chat.held.length > 0, "the next attempts");
      answered += chat.held.length;
      chat.answerAll();
    }
    await waitFor(() => service.list("sent").length === 31, "every delivery sent");
    expect(chat.mostOpen()).toBe(MAX_ATTEMPTS_PER_TARGET);
  });

  it("are cut off at 2 minutes on the daemon's clock, so a receiver that trickles frees its slot", async () => {
    const smtp = await tricklingSmtpServer();
    const { service, clock } = deliveryService({
      smtp: { host: "127.0.0.1", port: smtp.port, secure: false },
    });
    await service.start();
    const record = await service.deliver({
      agent: "digest",
      run: "r_1",
      when: "always",
      target: {
        name: "lead",
        target: DeliveryTargetSchema.parse({ to: "email", recipients: ["lead@example.test"] }),
        shared: false,
      },
      facts: { agent: "digest", run: "r_1", status: "completed", when: "always", result: "done" },
    });
    await waitFor(() => smtp.sockets.length === 1, "the SMTP connection");
    await waitFor(() => (smtp.sockets[0]?.bytesRead ?? 0) > 0, "the EHLO");
    expect(service.list("pending")).toHaveLength(1);
    clock.advanceBy(120_000);
    const [retrying] = await waitFor(
      () => service.list("retrying").length === 1 && service.list("retrying"),
      "the cut attempt",
    );
    expect(retrying?.id).toBe(record?.id);
    expect(retrying?.attempts[0]?.error).toBe("the email attempt did not end within 120 s: cut off");
    // The connection is closed at the deadline, not left to the server.
    await waitFor(
      () => smtp.sockets.every((socket) => socket.readableEnded || socket.destroyed),
      "the connection closed",
    );
  });
});
