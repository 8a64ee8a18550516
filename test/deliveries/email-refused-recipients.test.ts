import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { SMTPServer, type SMTPServerAddress } from "smtp-server";
import { afterEach, describe, expect, it } from "vitest";
import { DeliveryTargetSchema } from "../../src/config/delivery-settings.js";
import { DeliveryService } from "../../src/deliveries/delivery-service.js";
import { FilesDeliveryStore } from "../../src/deliveries/files-delivery-store.js";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { EnvVault } from "../../src/vault/env-vault.js";
import { makeDefinition } from "../support/make-definition.js";
import { ManualClock } from "../support/manual-clock.js";
import { waitFor } from "../support/wait-for.js";

/** A mail as the real SMTP server took it: its envelope's recipients and its To header. */
interface Taken {
  envelope: string[];
  toHeader: string;
}

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * A real SMTP server on `port` that answers each RCPT TO with `refuse(address, tries)` (a reply
 * code, or undefined to take it; `tries`: how many times that address was offered so far).
 */
async function smtpServer(port: number, refuse: (address: string, tries: number) => number | undefined) {
  const taken: Taken[] = [];
  const offered = new Map<string, number>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      const tries = (offered.get(address.address) ?? 0) + 1;
      offered.set(address.address, tries);
      const code = refuse(address.address, tries);
      if (code === undefined) return callback();
      callback(
        Object.assign(new Error(code < 500 ? "mailbox busy, try later" : "no such mailbox"), {
          responseCode: code,
        }),
      );
    },
    onData(stream, session, callback) {
      let data = "";
      stream.setEncoding("utf8").on("data", (chunk: string) => (data += chunk));
      stream.on("end", () => {
        taken.push({
          envelope: session.envelope.rcptTo.map((recipient) => recipient.address),
          toHeader: /^To: (.*)$/m.exec(data)?.[1] ?? "",
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve(undefined))));
  return taken;
}

/** A data folder, removed after the test (once the services on it are closed). */
function dataFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), "agentd-email-refused-"));
  cleanups.unshift(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

/** A delivery service on `folder` (a restart: a new one on the same folder), sending to `port`. */
function service(port: number, folder = dataFolder()) {
  const clock = new ManualClock(Date.now());
  const events = new EventBus({ now: () => new Date(clock.now()) });
  const seen: AgentEvent[] = [];
  events.subscribe((event) => seen.push(event));
  const logger = createLogger({ level: "silent", pretty: false });
  const definition = makeDefinition({ id: "digest", workdir: path.join(folder, "work") });
  const deliveries = new DeliveryService({
    store: new FilesDeliveryStore({ dataDirectory: folder, logger, now: () => clock.now() }),
    events,
    clock,
    vault: new EnvVault({}),
    redactor: new SecretRedactor(),
    config: { targets: {}, smtp: { host: "127.0.0.1", port, secure: false, require_tls: false } },
    definitionOf: () => definition,
    placeOf: (agent) => ({ workdir: agent.workdir, sandbox: { mode: "off" } as never }),
    logger,
  });
  cleanups.push(() => deliveries.close());
  const attempts = () => seen.flatMap((event) => (event.type === "delivery" ? [event.data] : []));
  return { folder, clock, deliveries, attempts };
}

const RECIPIENTS = ["lead@example.test", "ops@example.test"];

async function deliverDigest(deliveries: DeliveryService, recipients = RECIPIENTS): Promise<void> {
  await deliveries.start();
  await deliveries.deliver({
    agent: "digest",
    run: "r_1",
    when: "always",
    target: {
      name: "mail",
      shared: false,
      target: DeliveryTargetSchema.parse({ to: "email", recipients, subject: "Digest" }),
    },
    facts: {
      agent: "digest",
      run: "r_1",
      status: "completed",
      when: "always",
      result: "3 new issues",
      link: "l",
    },
  });
}

describe("an email the SMTP server refuses for some recipients", { timeout: 60_000 }, () => {
  it("is retried for the greylisted recipient alone, the others getting it once", async () => {
    const port = await freePort();
    // ops@ is greylisted: refused with 451 the first time, taken the second.
    const taken = await smtpServer(port, (address, tries) =>
      address === "ops@example.test" && tries === 1 ? 451 : undefined,
    );
    const { deliveries, attempts, clock } = service(port);
    await deliverDigest(deliveries);
    await waitFor(() => attempts().length === 1, "the first attempt");
    expect(attempts()[0]).toMatchObject({
      status: "retrying",
      error: expect.stringMatching(/sent to lead@example\.test; refused ops@example\.test \(451 /),
    });
    clock.advanceBy(1_000);
    await waitFor(() => attempts().length === 2, "the retry");
    expect(attempts()[1]).toMatchObject({ status: "sent", attempt: 2 });
    // Sent to everyone: no address is left owed it (GET /deliveries shows what the record holds).
    const [sent] = deliveries.list("sent");
    expect(sent?.remaining_recipients).toBeUndefined();
    // Each recipient got it once; the retry's headers still name both, as the first mail's did.
    expect(taken.map((mail) => mail.envelope)).toEqual([["lead@example.test"], ["ops@example.test"]]);
    expect(taken.map((mail) => mail.toHeader)).toEqual([RECIPIENTS.join(", "), RECIPIENTS.join(", ")]);
  });

  it("keeps owing it to the greylisted recipient alone when a retry is refused for all it goes to", async () => {
    const port = await freePort();
    // ops@ is refused twice: the second time it is the retry's only recipient, so the whole mail is.
    const taken = await smtpServer(port, (address, tries) =>
      address === "ops@example.test" && tries <= 2 ? 451 : undefined,
    );
    const { deliveries, attempts, clock } = service(port);
    await deliverDigest(deliveries);
    await waitFor(() => attempts().length === 1, "the first attempt");
    clock.advanceBy(1_000);
    await waitFor(() => attempts().length === 2, "the first retry");
    expect(attempts()[1]).toMatchObject({ status: "retrying" });
    expect(deliveries.list("retrying")[0]?.remaining_recipients).toEqual(["ops@example.test"]);
    clock.advanceBy(60_000);
    await waitFor(() => attempts().length === 3, "the second retry");
    expect(attempts()[2]).toMatchObject({ status: "sent" });
    expect(taken.map((mail) => mail.envelope)).toEqual([["lead@example.test"], ["ops@example.test"]]);
  });

  it("mails a recipient listed twice once, the retry included", async () => {
    const port = await freePort();
    const taken = await smtpServer(port, (address, tries) =>
      address === "ops@example.test" && tries === 1 ? 451 : undefined,
    );
    const { deliveries, attempts, clock } = service(port);
    await deliverDigest(deliveries, ["ops@example.test", "lead@example.test", "ops@example.test"]);
    await waitFor(() => attempts().length === 1, "the first attempt");
    expect(deliveries.list("retrying")[0]?.remaining_recipients).toEqual(["ops@example.test"]);
    clock.advanceBy(1_000);
    await waitFor(() => attempts().length === 2, "the retry");
    expect(attempts()[1]).toMatchObject({ status: "sent" });
    expect(taken.map((mail) => mail.envelope)).toEqual([["lead@example.test"], ["ops@example.test"]]);
  });

  it("fails at once, naming the recipient, when one is refused for good", async () => {
    const port = await freePort();
    const taken = await smtpServer(port, (address) => (address === "ops@example.test" ? 550 : undefined));
    const { deliveries, attempts } = service(port);
    await deliverDigest(deliveries);
    await waitFor(() => attempts().length === 1, "the attempt");
    expect(attempts()[0]).toMatchObject({
      status: "failed",
      error: expect.stringMatching(
        /sent to lead@example\.test; refused ops@example\.test \(550 no such mailbox\).*not retried/,
      ),
    });
    expect(deliveries.list("failed")).toHaveLength(1);
    expect(taken.map((mail) => mail.envelope)).toEqual([["lead@example.test"]]);
  });

  it("still reaches a greylisted recipient when another is refused for good, and ends failed naming that one", async () => {
    const port = await freePort();
    // ops@ is greylisted once; nobody@ does not exist (550); lead@ takes it.
    const taken = await smtpServer(port, (address, tries) => {
      if (address === "nobody@example.test") return 550;
      return address === "ops@example.test" && tries === 1 ? 451 : undefined;
    });
    const { deliveries, attempts, clock } = service(port);
    await deliverDigest(deliveries, ["lead@example.test", "ops@example.test", "nobody@example.test"]);
    await waitFor(() => attempts().length === 1, "the first attempt");
    expect(attempts()[0]).toMatchObject({
      status: "retrying",
      error: expect.stringMatching(
        /refused ops@example\.test \(451 .*nobody@example\.test \(550 no such mailbox\)/,
      ),
    });
    const [retrying] = deliveries.list("retrying");
    expect(retrying?.remaining_recipients).toEqual(["ops@example.test"]);
    expect(retrying?.refused_recipients).toEqual(["nobody@example.test"]);

    clock.advanceBy(1_000);
    await waitFor(() => attempts().length === 2, "the retry");
    // Everyone who could get it has it; the address refused for good is what the user must fix.
    expect(attempts()[1]).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/nobody@example\.test .*refused for good.*correct the address/),
    });
    const [failed] = deliveries.list("failed");
    expect(failed?.refused_recipients).toEqual(["nobody@example.test"]);
    expect(failed?.remaining_recipients).toBeUndefined();
    expect(taken.map((mail) => mail.envelope)).toEqual([["lead@example.test"], ["ops@example.test"]]);
  });

  it("retries only the greylisted one when the server refuses every recipient, one for good", async () => {
    const port = await freePort();
    const taken = await smtpServer(port, (address, tries) => {
      if (address === "nobody@example.test") return 550;
      return tries === 1 ? 451 : undefined;
    });
    const { deliveries, attempts, clock } = service(port);
    await deliverDigest(deliveries, ["ops@example.test", "nobody@example.test"]);
    await waitFor(() => attempts().length === 1, "the first attempt");
    expect(attempts()[0]).toMatchObject({ status: "retrying" });
    expect(deliveries.list("retrying")[0]?.remaining_recipients).toEqual(["ops@example.test"]);
    clock.advanceBy(1_000);
    await waitFor(() => attempts().length === 2, "the retry");
    expect(attempts()[1]).toMatchObject({ status: "failed" });
    expect(taken.map((mail) => mail.envelope)).toEqual([["ops@example.test"]]);
  });

  it("goes to the recipients still owed it after a restart, and to all once a server that was down is back", async () => {
    const port = await freePort();
    // Down: nothing listens on the port at the first attempt.
    const first = service(port);
    await deliverDigest(first.deliveries);
    await waitFor(() => first.attempts().length === 1, "the attempt while the server is down");
    expect(first.attempts()[0]).toMatchObject({
      status: "retrying",
      error: expect.stringContaining("ECONNREFUSED"),
    });
    // Back, greylisting ops@ once; the daemon stops after that attempt and starts again.
    const taken = await smtpServer(port, (address, tries) =>
      address === "ops@example.test" && tries === 1 ? 450 : undefined,
    );
    first.clock.advanceBy(1_000);
    await waitFor(() => first.attempts().length === 2, "the attempt once the server is back");
    expect(first.attempts()[1]).toMatchObject({ status: "retrying" });
    await first.deliveries.close();
    const second = service(port, first.folder);
    await second.deliveries.start();
    second.clock.advanceBy(60_000);
    await waitFor(() => second.deliveries.list("sent").length === 1, "the resumed delivery sent");
    expect(taken.map((mail) => mail.envelope)).toEqual([["lead@example.test"], ["ops@example.test"]]);
  });
});
