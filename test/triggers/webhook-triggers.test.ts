import { createHmac, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { textReply } from "../support/scripted-llm-server.js";
import { waitFor } from "../support/wait-for.js";
import { agentd } from "../support/agentd-cli.js";

const GITHUB_SECRET = "gh-hook-secret-value-0123456789";
const BEARER_SECRET = "bearer-hook-secret-value-0123456789";
// Standard Webhooks secrets are `whsec_` + base64 of the key.
const STANDARD_SECRET = `whsec_${Buffer.from("standard-webhooks-key-0123456789").toString("base64")}`;

const scripted = useScriptedDaemon({
  reply: textReply("looked at it"),
  // A body limit of its own (config triggers.webhook_body_limit), below the 1 MiB default.
  config: { vault: { backend: "env" }, triggers: { webhook_body_limit: "512KiB" } },
  environment: {
    AGENTD_SECRET_GH_HOOK: GITHUB_SECRET,
    AGENTD_SECRET_BEARER_HOOK: BEARER_SECRET,
    AGENTD_SECRET_STD_HOOK: STANDARD_SECRET,
  },
  agents: (project) => {
    project.writeAgent("reviewer", {
      triggers: [
        {
          webhook: "github-pr",
          secret: "{{secret:gh_hook}}",
          signature: "github",
          filter: { action: ["opened", "synchronize"] },
          task: "Review {{payload.pull_request.html_url}} (title: {{payload.pull_request.title}}); payload in {{payload_file}}",
        },
        { webhook: "std", secret: "{{secret:std_hook}}", signature: "standard" },
        {
          webhook: "token",
          secret: "{{secret:bearer_hook}}",
          signature: "bearer",
          rate_limit: { runs: 2, per: "1h" },
        },
      ],
    });
    project.writeAgent("quiet", { description: "an agent without triggers" });
    // An agent whose commands planted a symlink where payloads go, leading out of its workdir.
    project.writeAgent("victim", {
      triggers: [{ webhook: "in", secret: "{{secret:bearer_hook}}", signature: "bearer" }],
    });
    const victimWorkdir = path.join(project.root, ".agentd", "workspaces", "victim");
    mkdirSync(victimWorkdir, { recursive: true });
    mkdirSync(path.join(project.root, "outside"));
    symlinkSync(path.join(project.root, "outside"), path.join(victimWorkdir, ".agentd"));
  },
});

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { error?: { code: string } };
}

async function post(
  urlPath: string,
  body: string | Buffer,
  headers: Record<string, string>,
): Promise<Answer> {
  const response = await fetch(`${scripted.daemon.url}${urlPath}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === "" ? {} : JSON.parse(text) };
}

function githubHeaders(
  body: string | Buffer,
  delivery = randomUUID(),
  secret = GITHUB_SECRET,
): Record<string, string> {
  const signature = createHmac("sha256", secret).update(body).digest("hex");
  return {
    "x-hub-signature-256": `sha256=${signature}`,
    "x-github-delivery": delivery,
    "x-github-event": "pull_request",
  };
}

function pullRequest(action: string, number: number): string {
  return JSON.stringify({
    action,
    number,
    pull_request: { html_url: `https://github.com/acme/app/pull/${number}`, title: `change ${number}` },
  });
}

async function runOf(id: string): Promise<Record<string, unknown>> {
  const reply = await scripted.daemon.request("GET", `/runs/${id}`);
  expect(reply.status).toBe(200);
  return reply.body as Record<string, unknown>;
}

describe("webhook triggers at POST /hooks/<agent>/<name>", { timeout: 90_000 }, () => {
  it("starts a run for a GitHub-signed delivery, with the payload in the task and in a workdir file", async () => {
    const body = pullRequest("opened", 7);
    const delivery = randomUUID();
    const answer = await post("/hooks/reviewer/github-pr", body, githubHeaders(body, delivery));
    expect(answer.status).toBe(202);
    expect(answer.body.run).toMatch(/^r_/);
    const run = await runOf(answer.body.run as string);
    expect(run.trigger).toEqual({ kind: "webhook", name: "github-pr", id: delivery });
    const task = run.task as string;
    expect(task).toContain("Review https://github.com/acme/app/pull/7 (title: change 7)");
    const file = /payload in (\S+)/.exec(task)?.[1] as string;
    expect(file).toMatch(/^\.agentd\/payloads\/github-pr-.*\.json$/);
    const workdir = path.join(scripted.project.root, ".agentd", "workspaces", "reviewer");
    expect(readFileSync(path.join(workdir, file), "utf8")).toBe(body);
    await waitFor(
      async () => ["completed"].includes((await runOf(run.id as string)).status as string),
      "the run ends",
    );
  });

  it("answers a repeated delivery id with the run it started, and a replayed body under a new id too", async () => {
    const body = pullRequest("opened", 8);
    const delivery = randomUUID();
    const first = await post("/hooks/reviewer/github-pr", body, githubHeaders(body, delivery));
    expect(first.status).toBe(202);
    const again = await post("/hooks/reviewer/github-pr", body, githubHeaders(body, delivery));
    expect(again).toMatchObject({ status: 200, body: { run: first.body.run, duplicate: true } });
    // GitHub signs the body only: a captured delivery resent under another id is the same delivery.
    const replay = await post("/hooks/reviewer/github-pr", body, githubHeaders(body, randomUUID()));
    expect(replay).toMatchObject({ status: 200, body: { run: first.body.run, duplicate: true } });
  });

  it("refuses forged, missing and wrongly keyed signatures with one 401, for known and unknown names alike", async () => {
    const body = pullRequest("opened", 9);
    const forged = { ...githubHeaders(body), "x-hub-signature-256": `sha256=${"0".repeat(64)}` };
    const wrongKey = githubHeaders(body, randomUUID(), "not-the-secret");
    const tampered = githubHeaders(body);
    const missing = { "x-github-delivery": randomUUID() };
    // GitHub's older SHA-1 header, right for this body and secret: only the SHA-256 one counts.
    const sha1Only = {
      "x-github-delivery": randomUUID(),
      "x-hub-signature": `sha1=${createHmac("sha1", GITHUB_SECRET).update(body).digest("hex")}`,
    };
    const answers = [
      await post("/hooks/reviewer/github-pr", body, forged),
      await post("/hooks/reviewer/github-pr", body, wrongKey),
      await post("/hooks/reviewer/github-pr", body.replace("opened", "closed"), tampered),
      await post("/hooks/reviewer/github-pr", body, missing),
      await post("/hooks/reviewer/github-pr", body, sha1Only),
      await post("/hooks/reviewer/nope", body, githubHeaders(body)),
      await post("/hooks/nobody/github-pr", body, githubHeaders(body)),
      await post("/hooks/quiet/github-pr", body, githubHeaders(body)),
      // A bearer trigger's secret sent as a GitHub signature, and the API's own token: neither opens it.
      await post("/hooks/reviewer/token", body, githubHeaders(body, randomUUID(), BEARER_SECRET)),
      await post("/hooks/reviewer/token", body, scripted.daemon.headers()),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(answers[0]?.body);
    }
    // No run was made by any of them.
    const runs = (await scripted.daemon.request("GET", "/runs?agent=reviewer")).body as {
      runs: Array<{ task: string }>;
    };
    expect(runs.runs.some((run) => run.task.includes("/pull/9"))).toBe(false);
  });

  it("skips a delivery its filter does not pass, and starts none", async () => {
    const body = pullRequest("closed", 10);
    const answer = await post("/hooks/reviewer/github-pr", body, githubHeaders(body));
    expect(answer).toMatchObject({ status: 200, body: { skipped: true, reason: "filter" } });
    const runs = (await scripted.daemon.request("GET", "/runs?agent=reviewer")).body as {
      runs: Array<{ task: string }>;
    };
    expect(runs.runs.some((run) => run.task.includes("/pull/10"))).toBe(false);
  });

  it("verifies Standard Webhooks signed with the reference library, refusing a timestamp 10 min off", async () => {
    const signer = new Webhook(STANDARD_SECRET);
    const body = JSON.stringify({ type: "invoice.paid", data: { id: "in_1" } });
    const id = `msg_${randomUUID()}`;
    const now = new Date();
    const headers = {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": signer.sign(id, now, body),
    };
    const answer = await post("/hooks/reviewer/std", body, headers);
    expect(answer.status).toBe(202);
    expect((await runOf(answer.body.run as string)).trigger).toEqual({ kind: "webhook", name: "std", id });
    expect(await post("/hooks/reviewer/std", body, headers)).toMatchObject({
      status: 200,
      body: { run: answer.body.run, duplicate: true },
    });
    const old = new Date(now.getTime() - 10 * 60_000);
    const stale = {
      "webhook-id": `msg_${randomUUID()}`,
      "webhook-timestamp": String(Math.floor(old.getTime() / 1000)),
    };
    const staleAnswer = await post("/hooks/reviewer/std", body, {
      ...stale,
      "webhook-signature": signer.sign(stale["webhook-id"], old, body),
    });
    expect(staleAnswer.status).toBe(401);
    // As far in the future: a capture signed ahead of time is no better.
    const ahead = new Date(now.getTime() + 10 * 60_000);
    const early = {
      "webhook-id": `msg_${randomUUID()}`,
      "webhook-timestamp": String(Math.floor(ahead.getTime() / 1000)),
    };
    const earlyAnswer = await post("/hooks/reviewer/std", body, {
      ...early,
      "webhook-signature": signer.sign(early["webhook-id"], ahead, body),
    });
    expect(earlyAnswer.status).toBe(401);
  });

  it("limits a trigger's runs, answering 429 with retry-after", async () => {
    const bearer = { authorization: `Bearer ${BEARER_SECRET}` };
    const first = await post("/hooks/reviewer/token", "{}", { ...bearer, "idempotency-key": "a" });
    const second = await post("/hooks/reviewer/token", "{}", { ...bearer, "idempotency-key": "b" });
    expect([first.status, second.status]).toEqual([202, 202]);
    // A duplicate is answered before the limit and costs nothing.
    expect((await post("/hooks/reviewer/token", "{}", { ...bearer, "idempotency-key": "a" })).status).toBe(
      200,
    );
    const third = await post("/hooks/reviewer/token", "{}", { ...bearer, "idempotency-key": "c" });
    expect(third.status).toBe(429);
    expect(third.body.error?.code).toBe("RATE_LIMITED");
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("refuses a body over the configured bound with 413, another content type with 415, a browser origin with 403", async () => {
    const huge = Buffer.alloc(512 * 1024 + 1, 0x20);
    expect((await post("/hooks/reviewer/github-pr", huge, githubHeaders(huge))).status).toBe(413);
    // Sent in chunks without a content-length: refused as the bytes pass the bound, not read whole.
    // The daemon answers and hangs up while the client still writes: the client sees the 413, or
    // its write fails (EPIPE, a reset) — either way the rest was never read.
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let index = 0; index < 40; index++) controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
        controller.close();
      },
    });
    const chunked = await fetch(`${scripted.daemon.url}/hooks/reviewer/github-pr`, {
      method: "POST",
      headers: { "content-type": "application/json", ...githubHeaders(huge) },
      body: chunks,
      duplex: "half",
    } as RequestInit).then(
      (response) => String(response.status),
      (error: Error & { cause?: { code?: string } }) => error.cause?.code ?? String(error),
    );
    expect(chunked).toMatch(/^(413|EPIPE|ECONNRESET|UND_ERR_SOCKET)$/);
    // Right at the bound, a signed body is read (and here skipped by the filter).
    const padding = " ".repeat(512 * 1024 - Buffer.byteLength(pullRequest("closed", 12)));
    const atBound = Buffer.from(`${pullRequest("closed", 12)}${padding}`);
    expect(atBound.length).toBe(512 * 1024);
    expect(await post("/hooks/reviewer/github-pr", atBound, githubHeaders(atBound))).toMatchObject({
      status: 200,
      body: { skipped: true },
    });
    const form = "payload=%7B%7D";
    const asForm = await post("/hooks/reviewer/github-pr", form, {
      ...githubHeaders(form),
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(asForm.status).toBe(415);
    const body = pullRequest("opened", 11);
    const fromPage = await post("/hooks/reviewer/github-pr", body, {
      ...githubHeaders(body),
      origin: "https://evil.example",
    });
    expect(fromPage.status).toBe(403);
  });

  it("keeps payload text out of the template and never writes outside the workdir", async () => {
    const body = JSON.stringify({
      action: "opened",
      pull_request: {
        html_url: "{{payload.secret}} {{secret:gh_hook}} }}{{{{",
        title: "x",
      },
      secret: "LEAKED",
    });
    const answer = await post("/hooks/reviewer/github-pr", body, githubHeaders(body));
    expect(answer.status).toBe(202);
    const task = (await runOf(answer.body.run as string)).task as string;
    expect(task).not.toContain("LEAKED");
    expect(task).not.toContain(GITHUB_SECRET);
    expect(task).not.toMatch(/\{\{[^}]*\}\}/);
    // Names with path tricks reach no trigger.
    for (const name of ["..%2F..%2Fagents", "github-pr%2F..", "%2e%2e"]) {
      const tricked = await post(`/hooks/reviewer/${name}`, body, githubHeaders(body));
      expect([401, 404]).toContain(tricked.status);
    }
    expect(existsSync(path.join(scripted.project.root, ".agentd", "payloads"))).toBe(false);
  });

  it("never writes a payload through a symlink out of the workdir", async () => {
    const answer = await post("/hooks/victim/in", '{"x":1}', { authorization: `Bearer ${BEARER_SECRET}` });
    expect(answer.status).toBe(202);
    expect(readdirSync(path.join(scripted.project.root, "outside"))).toEqual([]);
    expect((await runOf(answer.body.run as string)).task).toContain(
      "the payload could not be written to a file",
    );
  });

  it("takes deep and wide JSON without stalling, and documents the route", async () => {
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    const deepAnswer = await post("/hooks/reviewer/token", deep, {
      authorization: `Bearer ${BEARER_SECRET}`,
    });
    expect([202, 429]).toContain(deepAnswer.status);
    const health = await scripted.daemon.request("GET", "/health");
    expect(health.status).toBe(200);
    const document = (await scripted.daemon.request("GET", "/openapi.json")).body as {
      paths: Record<string, { post?: { operationId?: string; security?: unknown[]; responses: object } }>;
    };
    const hook = document.paths["/hooks/{agent}/{name}"]?.post;
    expect(hook?.operationId).toBe("deliverWebhook");
    expect(hook?.security).toEqual([]);
    expect(Object.keys(hook?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "202", "401", "413", "429"]),
    );
  });

  it("lists every trigger with its health at GET /triggers (role read, documented)", async () => {
    const reply = await scripted.daemon.request("GET", "/triggers");
    expect(reply.status).toBe(200);
    const { triggers } = reply.body as {
      triggers: Array<
        { agent: string; name: string; kind: string; counts: Record<string, number> } & Record<
          string,
          unknown
        >
      >;
    };
    const of = (agent: string, name: string) => triggers.find((t) => t.agent === agent && t.name === name);
    expect(triggers.map((t) => `${t.agent}/${t.name}`)).toEqual([
      "reviewer/github-pr",
      "reviewer/std",
      "reviewer/token",
      "victim/in",
    ]);
    const github = of("reviewer", "github-pr");
    expect(github).toMatchObject({
      kind: "webhook",
      detail: expect.stringContaining("POST /hooks/reviewer/github-pr"),
    });
    // What the tests above sent it: runs started, replays, forged signatures, filtered payloads.
    expect(github?.counts.accepted).toBeGreaterThanOrEqual(2);
    expect(github?.counts.duplicate).toBeGreaterThanOrEqual(2);
    expect(github?.counts.refused).toBeGreaterThanOrEqual(3);
    expect(github?.counts.skipped).toBeGreaterThanOrEqual(2);
    expect(github?.last_fired_at).toEqual(expect.any(String));
    expect(github?.last_error).toMatch(/signature did not verify/);
    expect(of("reviewer", "token")?.counts.rate_limited).toBeGreaterThanOrEqual(1);
    // The stale and the early timestamp.
    expect(of("reviewer", "std")?.counts.refused).toBe(2);
    // Nothing of a secret's value, only its vault reference.
    expect(JSON.stringify(reply.body)).not.toContain(GITHUB_SECRET);
    const document = (await scripted.daemon.request("GET", "/openapi.json")).body as {
      paths: Record<string, { get?: { operationId?: string; "x-agentd-role"?: string } }>;
    };
    // The CLI prints the same, one line per trigger.
    const printed = await agentd(["triggers", "--health", "--config", scripted.project.configFile], {
      environment: { AGENTD_URL: scripted.daemon.url, AGENTD_TOKEN: scripted.daemon.token ?? "" },
    });
    expect(printed.exitCode, printed.stderr).toBe(0);
    expect(printed.stdout).toMatch(/reviewer {2}webhook {2}github-pr {2}last fired \S+Z {2}accepted \d+/);
    expect(printed.stdout).toMatch(/reviewer {2}webhook {2}token .*rate_limited \d+/);
    expect(document.paths["/triggers"]?.get).toMatchObject({
      operationId: "listTriggers",
      "x-agentd-role": "read",
    });
  });
});
