import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { SMTPServer } from "smtp-server";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { DeliveryTargetSchema, type DeliveriesConfig } from "../../src/config/delivery-settings.js";
import { DeliveryService } from "../../src/deliveries/delivery-service.js";
import type { DeliveryFacts } from "../../src/deliveries/delivery-facts.js";
import type { NamedTarget } from "../../src/deliveries/delivery-targets.js";
import { FilesDeliveryStore } from "../../src/deliveries/files-delivery-store.js";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { EnvVault } from "../../src/vault/env-vault.js";
import { makeDefinition } from "../support/make-definition.js";
import { ManualClock } from "../support/manual-clock.js";
import { waitFor } from "../support/wait-for.js";

interface Received {
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A local HTTP receiver: records every request and answers with `reply` (200 by default). */
async function receiver(
  reply: (request: Received, count: number) => { status: number; headers?: Record<string, string> } = () => ({
    status: 200,
  }),
): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      const entry = { path: request.url ?? "", headers: request.headers, body };
      received.push(entry);
      const answer = reply(entry, received.length);
      response.writeHead(answer.status, answer.headers ?? {}).end(answer.status < 300 ? "ok" : "no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

const servers: Array<{ close(callback?: () => void): unknown; closeAllConnections?: () => void }> = [];
const folders: string[] = [];
/** Services a test left open: closed (their last store writes settled) before their folders go. */
const services: DeliveryService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()));
  await Promise.all(
    servers.splice(0).map((server) => {
      const closed = new Promise((resolve) => server.close(() => resolve(undefined)));
      server.closeAllConnections?.();
      return closed;
    }),
  );
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const WEBHOOK_SECRET = `whsec_${Buffer.from("a-webhook-secret-of-32-bytes-len").toString("base64")}`;
const TELEGRAM_TOKEN = "123456:telegram-bot-token-value";

function setUp(
  options: { config?: Partial<DeliveriesConfig>; environment?: Record<string, string>; folder?: string } = {},
) {
  const folder = options.folder ?? mkdtempSync(path.join(tmpdir(), "agentd-deliveries-"));
  folders.push(folder);
  const clock = new ManualClock(Date.now());
  const bus = new EventBus({ now: () => new Date(clock.now()) });
  const redactor = new SecretRedactor();
  const events: AgentEvent[] = [];
  bus.subscribe((event) => events.push(redactor.redactValue(event)));
  const definition = makeDefinition({ id: "digest", workdir: path.join(folder, "work") });
  const logger = createLogger({ level: "silent", pretty: false });
  const service = new DeliveryService({
    store: new FilesDeliveryStore({ dataDirectory: folder, logger, now: () => clock.now() }),
    events: bus,
    clock,
    vault: new EnvVault(options.environment ?? {}),
    redactor,
    config: { targets: {}, ...options.config },
    definitionOf: (agent) => (agent === "digest" ? definition : undefined),
    placeOf: (agentDefinition) => ({
      workdir: agentDefinition.workdir,
      // Unsandboxed: the workdir fence alone applies, which is what this file tests.
      sandbox: { mode: "off" } as never,
    }),
    logger,
  });
  services.push(service);
  return { folder, clock, events, service, redactor, definition };
}

const FACTS: DeliveryFacts = {
  agent: "digest",
  run: "r_1",
  status: "completed",
  when: "always",
  duration_ms: 12_000,
  cost_usd: 0.0031,
  result: "3 new issues <!channel> & @everyone",
  link: "http://127.0.0.1:7070/#/runs/r_1",
};

function named(name: string, target: unknown, shared = false): NamedTarget {
  return { name, target: DeliveryTargetSchema.parse(target), shared };
}

function deliveryEvents(events: AgentEvent[]) {
  return events.flatMap((event) => (event.type === "delivery" ? [event.data] : []));
}

describe("deliveries to real receivers", () => {
  it("signs a webhook the Standard Webhooks way, verified by its reference library", async () => {
    const hook = await receiver();
    const { service, events } = setUp({ environment: { AGENTD_SECRET_HOOK_SECRET: WEBHOOK_SECRET } });
    await service.start();
    const record = await service.deliver({
      agent: "digest",
      run: "r_1",
      when: "always",
      target: named("reviewer", { to: "webhook", url: `${hook.url}/in`, secret: "{{secret:hook_secret}}" }),
      facts: FACTS,
    });
    const request = await waitFor(() => hook.received[0], "the webhook");
    const payload = new Webhook(WEBHOOK_SECRET).verify(
      request.body,
      request.headers as Record<string, string>,
    ) as {
      type: string;
      data: Record<string, unknown>;
    };
    expect(request.headers["webhook-id"]).toBe(record?.id);
    expect(payload.type).toBe("run.completed");
    expect(payload.data).toMatchObject({
      agent: "digest",
      run: "r_1",
      status: "completed",
      cost_usd: 0.0031,
    });
    // A forged body fails verification.
    expect(() =>
      new Webhook(WEBHOOK_SECRET).verify(
        request.body.replace("digest", "forged"),
        request.headers as Record<string, string>,
      ),
    ).toThrow();
    await waitFor(() => deliveryEvents(events).length === 1, "the delivery event");
    expect(deliveryEvents(events)).toEqual([
      { target: "reviewer", status: "sent", attempt: 1, delivery: record?.id },
    ]);
    // The webhook secret appears in no event and not in the stored deliveries.
    expect(JSON.stringify(events)).not.toContain("a-webhook-secret");
  });

  it("retries a webhook with the same body, signed again at the attempt's own time", async () => {
    const hook = await receiver((_request, count) => ({ status: count === 1 ? 503 : 200 }));
    const { service, clock } = setUp({ environment: { AGENTD_SECRET_HOOK_SECRET: WEBHOOK_SECRET } });
    await service.start();
    const madeAt = clock.now();
    await service.deliver({
      agent: "digest",
      run: "r_1",
      when: "always",
      target: named("reviewer", { to: "webhook", url: `${hook.url}/in`, secret: "{{secret:hook_secret}}" }),
      facts: FACTS,
    });
    await waitFor(() => service.list("retrying").length === 1, "the first attempt refused");
    clock.advanceBy(5_000);
    const [first, second] = await waitFor(() => hook.received.length === 2 && hook.received, "the retry");
    // The event's time in the body, the attempt's time in the signed header: a receiver verifies
    // the retry as fresh, and reads the same event.
    expect(second?.body).toBe(first?.body);
    const payload = new Webhook(WEBHOOK_SECRET).verify(
      second?.body ?? "",
      second?.headers as Record<string, string>,
    ) as { timestamp: string };
    expect(payload.timestamp).toBe(new Date(madeAt).toISOString());
    expect(Number(second?.headers["webhook-timestamp"])).toBeGreaterThan(
      Number(first?.headers["webhook-timestamp"]),
    );
    expect(second?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);
  });

  it("posts Slack, Discord and Telegram requests in their documented shapes", async () => {
    const chat = await receiver();
    const { service } = setUp({ environment: { AGENTD_SECRET_TELEGRAM: TELEGRAM_TOKEN } });
    await service.start();
    const deliver = (target: NamedTarget) =>
      service.deliver({ agent: "digest", run: "r_1", when: "always", target, facts: FACTS });
    await deliver(named("slack", { to: "slack", url: `${chat.url}/services/T1/B1/slacktokenvalue` }));
    await deliver(named("discord", { to: "discord", url: `${chat.url}/api/webhooks/1/discordtokenvalue` }));
    await deliver(
      named("telegram", {
        to: "telegram",
        token: "{{secret:telegram}}",
        chat_id: -100123,
        api_url: chat.url,
      }),
    );
    await waitFor(() => chat.received.length === 3, "three chat requests");
    const byPath = (prefix: string): Received => {
      const found = chat.received.find((request) => request.path.startsWith(prefix));
      if (!found) throw new Error(`no request to ${prefix}`);
      return found;
    };
    const slack = byPath("/services/");
    expect(slack.headers["content-type"]).toBe("application/json");
    const slackBody = JSON.parse(slack.body) as { text: string };
    expect(Object.keys(slackBody)).toEqual(["text"]);
    // The agent's text is made inert: no <!channel> mention reaches Slack.
    expect(slackBody.text).toContain("&lt;!channel&gt; &amp;");
    expect(slackBody.text).toContain(`<${FACTS.link}|`);
    expect(slackBody.text).toContain("*digest completed in 12s ($0.0031)*");
    const discordBody = JSON.parse(byPath("/api/webhooks/").body) as Record<string, unknown>;
    expect(discordBody).toEqual({
      content: expect.stringContaining("@everyone"),
      allowed_mentions: { parse: [] },
    });
    const telegram = byPath(`/bot${TELEGRAM_TOKEN}/sendMessage`);
    const telegramBody = JSON.parse(telegram.body) as Record<string, unknown>;
    expect(telegramBody).toMatchObject({ chat_id: "-100123", text: expect.stringContaining("3 new issues") });
  });

  it("sends email through a real SMTP server that requires a login", async () => {
    const messages: Array<{ from: string; to: string[]; data: string; user: string }> = [];
    const smtp = new SMTPServer({
      authOptional: false,
      allowInsecureAuth: true,
      disabledCommands: ["STARTTLS"],
      onAuth(auth, _session, callback) {
        if (auth.username === "agentd" && auth.password === "smtp-password-123")
          callback(null, { user: "agentd" });
        else callback(new Error("bad login"));
      },
      onData(stream, session, callback) {
        let data = "";
        stream.setEncoding("utf8").on("data", (chunk: string) => (data += chunk));
        stream.on("end", () => {
          messages.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((recipient) => recipient.address),
            data,
            user: String(session.user),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
    servers.push(smtp);
    const port = (smtp.server.address() as AddressInfo).port;
    const { service, events } = setUp({
      config: {
        smtp: {
          host: "127.0.0.1",
          port,
          secure: false,
          require_tls: false,
          user: "agentd",
          password: "smtp-password-123",
        },
      },
    });
    await service.start();
    await service.deliver({
      agent: "digest",
      run: "r_1",
      when: "always",
      target: named("mail", {
        to: "email",
        recipients: ["ops@example.test", "lead@example.test"],
        from: "agentd@example.test",
        subject: "Digest: {{status}}",
      }),
      facts: FACTS,
    });
    const message = await waitFor(() => messages[0], "the email");
    expect(message).toMatchObject({
      from: "agentd@example.test",
      to: ["ops@example.test", "lead@example.test"],
      user: "agentd",
    });
    expect(message.data).toContain("Subject: Digest: completed");
    expect(message.data).toContain("3 new issues");
    await waitFor(() => deliveryEvents(events).some((event) => event.status === "sent"), "sent");
  });

  it("retries after a 500 and after the receiver's retry-after, on the manual clock", async () => {
    const hook = await receiver((_request, count) =>
      count === 1
        ? { status: 500 }
        : count === 2
          ? { status: 429, headers: { "retry-after": "30" } }
          : { status: 200 },
    );
    const { service, events, clock } = setUp();
    await service.start();
    await service.deliver({
      agent: "digest",
      run: "r_1",
      when: "always",
      target: named("slack", { to: "slack", url: `${hook.url}/services/x` }),
      facts: FACTS,
    });
    await waitFor(() => deliveryEvents(events).length === 1, "the first attempt");
    expect(deliveryEvents(events)[0]).toMatchObject({ status: "retrying", attempt: 1 });
    clock.advanceBy(999);
    expect(hook.received).toHaveLength(1);
    clock.advanceBy(1);
    await waitFor(() => deliveryEvents(events).length === 2, "the second attempt");
    expect(deliveryEvents(events)[1]).toMatchObject({ status: "retrying", attempt: 2 });
    // Back-off would be 2 s; the receiver asked for 30 s.
    clock.advanceBy(29_000);
    expect(hook.received).toHaveLength(2);
    clock.advanceBy(1_000);
    await waitFor(() => deliveryEvents(events).length === 3, "the third attempt");
    expect(deliveryEvents(events)[2]).toMatchObject({ status: "sent", attempt: 3 });
    expect(service.list("sent")[0]?.attempts.map((attempt) => attempt.status_code)).toEqual([500, 429, 200]);
  });

  it("gives up after 8 attempts, warns once per failing target, and never follows a redirect", async () => {
    const elsewhere = await receiver();
    const redirecting = await receiver(() => ({
      status: 302,
      headers: { location: `${elsewhere.url}/stolen` },
    }));
    const failing = await receiver(() => ({ status: 503 }));
    const { service, events, clock } = setUp();
    await service.start();
    await service.deliver({
      agent: "digest",
      run: "r_1",
      when: "always",
      target: named("moved", { to: "discord", url: `${redirecting.url}/api/webhooks/1/x` }),
      facts: FACTS,
    });
    await waitFor(() => deliveryEvents(events).some((event) => event.target === "moved"), "the redirect");
    expect(deliveryEvents(events).find((event) => event.target === "moved")).toMatchObject({
      status: "failed",
    });
    expect(elsewhere.received).toHaveLength(0);

    for (const run of ["r_2", "r_3"]) {
      await service.deliver({
        agent: "digest",
        run,
        when: "always",
        target: named("down", { to: "slack", url: `${failing.url}/services/x` }),
        facts: { ...FACTS, run },
      });
    }
    for (let attempt = 1; attempt <= 8; attempt++) {
      await waitFor(
        () =>
          deliveryEvents(events).filter((event) => event.target === "down" && event.attempt === attempt)
            .length === 2,
        `attempt ${attempt}`,
      );
      clock.advanceBy(2 ** attempt * 1_000);
    }
    const down = deliveryEvents(events).filter((event) => event.target === "down");
    expect(down.filter((event) => event.status === "failed")).toHaveLength(2);
    expect(failing.received).toHaveLength(16);
    const warnings = events.filter(
      (event) => event.type === "warning" && event.data.code === "DELIVERY_FAILED",
    );
    // One for the redirecting target, one for the failing one: not one per run.
    expect(warnings.map((event) => (event.data as { message: string }).message)).toEqual([
      expect.stringContaining('"moved"'),
      expect.stringContaining('"down"'),
    ]);
  });

  it("masks a secret that Discord's length cap cuts in two", async () => {
    const chat = await receiver();
    const { service, redactor } = setUp();
    const secret = "sk-live-7f3a9c1e5b2d8f4a6c0e9b7d";
    redactor.add("api_key", secret);
    await service.start();
    // Discord's text is cut to 1,899 characters and `…`: the secret's first 12 would be kept.
    const result = `${"x".repeat(1_899 - 12)}${secret} and more`;
    const record = await service.deliver({
      agent: "digest",
      run: "r_1",
      when: "always",
      target: named("discord", {
        to: "discord",
        url: `${chat.url}/api/webhooks/1/t`,
        template: "{{result}}",
      }),
      facts: { ...FACTS, result },
    });
    const request = await waitFor(() => chat.received[0], "the Discord request");
    const content = String((JSON.parse(request.body) as { content: string }).content);
    expect(content).toContain("[secret:api");
    expect(content).not.toContain(secret.slice(0, 8));
    expect(record?.content.text).not.toContain(secret.slice(0, 8));
  });

  it("masks a secret cut in two where a refusal's answer is cut in the attempt's error", async () => {
    const secret = "sk-live-7f3a9c1e5b2d8f4a6c0e9b7d";
    // The answer's first 300 characters are kept: the secret's first 12 would be.
    const answer = `${"x".repeat(300 - 12)}${secret} was refused`;
    const server = createServer((_request, response) => response.writeHead(400).end(answer));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push(server);
    const { service, redactor, events } = setUp();
    redactor.add("api_key", secret);
    await service.start();
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/webhooks/1/t`;
    await service.deliver({
      agent: "digest",
      run: "r_1",
      when: "always",
      target: named("refusing", { to: "discord", url }),
      facts: FACTS,
    });
    await waitFor(() => deliveryEvents(events).length === 1, "the refusal");
    const error = service.list("failed")[0]?.attempts[0]?.error ?? "";
    expect(error).toContain("answered 400");
    expect(error).toContain("[secret:api_key…]");
    expect(error).not.toContain(secret.slice(0, 8));
  });

  it("writes file targets inside the workdir only, never through a symlink out of it", async () => {
    const { service, events, folder, definition } = setUp();
    await service.start();
    mkdirSync(definition.workdir, { recursive: true });
    const outside = path.join(folder, "outside.txt");
    writeFileSync(outside, "");
    symlinkSync(outside, path.join(definition.workdir, "escape.txt"));
    for (const [name, file] of [
      ["digest", "reports/digest.md"],
      ["escape", "escape.txt"],
      ["dots", "../outside.txt"],
    ] as const) {
      await service.deliver({
        agent: "digest",
        run: "r_1",
        when: "always",
        target: named(name, { to: "file", path: file, template: "{{agent}}: {{result}}" }),
        facts: FACTS,
      });
    }
    await waitFor(() => deliveryEvents(events).length === 3, "three file deliveries");
    expect(readFileSync(path.join(definition.workdir, "reports/digest.md"), "utf8")).toBe(
      `digest: ${FACTS.result}\n`,
    );
    expect(readFileSync(outside, "utf8")).toBe("");
    const byTarget = Object.fromEntries(deliveryEvents(events).map((event) => [event.target, event.status]));
    expect(byTarget).toEqual({ digest: "sent", escape: "failed", dots: "failed" });
  });

  it("resumes open deliveries from the store after a restart", async () => {
    const hook = await receiver((_request, count) => ({ status: count === 1 ? 500 : 200 }));
    const first = setUp();
    await first.service.start();
    await first.service.deliver({
      agent: "digest",
      run: "r_1",
      when: "always",
      target: named("slack", { to: "slack", url: `${hook.url}/services/x` }),
      facts: FACTS,
    });
    await waitFor(() => first.service.list("retrying").length === 1, "a retrying delivery");
    await first.service.close();
    const second = setUp({ folder: first.folder });
    await second.service.start();
    expect(second.service.list("retrying")).toHaveLength(1);
    second.clock.advanceBy(60_000);
    await waitFor(() => second.service.list("sent").length === 1, "the resumed delivery sent");
    expect(hook.received).toHaveLength(2);
    expect(second.service.list("sent")[0]?.attempts).toHaveLength(2);
  });
});
