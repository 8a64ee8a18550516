import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { httpErrorReply, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { recordingReceiver } from "../support/recording-receiver.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { agentEvents, startRun, waitForRunEnd } from "./api-shapes.js";

const kit = useTestKit();

const SLACK_TOKEN = "slack-webhook-token-0123456789";

interface Delivery {
  agent: string;
  target: string;
  status: string;
  when: string;
  attempts: unknown[];
}

async function deliveries(daemon: { request: (method: string, path: string) => Promise<{ body: unknown }> }) {
  return ((await daemon.request("GET", "/deliveries")).body as { deliveries: Delivery[] }).deliveries;
}

describe("deliveries of the daemon", () => {
  it("delivers changed results only, lets the agent notify, and keeps the target's secret out of events", async () => {
    const chat = await recordingReceiver(kit);
    const { llm, project } = await kit.scriptedProject(undefined, { config: { vault: { backend: "env" } } });
    llm.setDefaultReply((request) =>
      textReply(JSON.stringify(request.body?.messages ?? []).includes("second-result") ? "B" : "A"),
    );
    project.writeAgent("monitor", {
      deliver: [{ to: "slack", url: "{{secret:slack_url}}", when: "changed" }],
    });
    project.writeAgent("watcher", {
      deliver: [{ to: "discord", url: `${chat.url}/api/webhooks/1/discord`, when: ["agent"] }],
    });
    project.writeAgent("pager", {
      tools: ["ask_human"],
      deliver: [{ to: "slack", url: `${chat.url}/pager`, when: ["failure", "waiting"] }],
    });
    const daemon = await kit.daemon(project.configFile, {
      environment: { AGENTD_SECRET_SLACK_URL: `${chat.url}/services/T1/B1/${SLACK_TOKEN}` },
    });
    for (const task of ["first", "first again", "second-result"]) {
      await waitForRunEnd(daemon, await startRun(daemon, "monitor", task));
    }
    const slackRequests = () => chat.received.filter((request) => request.path.startsWith("/services/"));
    await waitFor(() => slackRequests().length === 2, "two deliveries of monitor");
    const slack = slackRequests();
    // The first run counts as changed, the second repeats it, the third differs.
    expect(slack.map((request) => (JSON.parse(request.body) as { text: string }).text)).toEqual([
      expect.stringMatching(/^\*monitor completed in .*\n?A/s),
      expect.stringMatching(/B/),
    ]);

    llm.enqueue(
      toolCallReply({ name: "notify", arguments: { message: "disk is 95% full" } }),
      textReply("done"),
    );
    await waitForRunEnd(daemon, await startRun(daemon, "watcher", "check the disk"));
    const discord = await waitFor(
      () => chat.received.find((request) => request.path.startsWith("/api/webhooks/")),
      "the notification",
    );
    expect(JSON.parse(discord.body)).toMatchObject({
      content: expect.stringContaining("disk is 95% full"),
      allowed_mentions: { parse: [] },
    });

    const events: AgentEvent[] = [
      ...(await agentEvents(daemon, "monitor")),
      ...(await agentEvents(daemon, "watcher")),
    ];
    const sent = events.filter((event) => event.type === "delivery");
    expect(sent.map((event) => event.data)).toEqual([
      expect.objectContaining({ target: "slack#0", status: "sent", attempt: 1 }),
      expect.objectContaining({ target: "slack#0", status: "sent", attempt: 1 }),
      expect.objectContaining({ target: "discord#0", status: "sent", attempt: 1 }),
    ]);
    expect(JSON.stringify(events)).not.toContain(SLACK_TOKEN);
    const listed = await deliveries(daemon);
    expect(listed.map((delivery) => [delivery.agent, delivery.when, delivery.status])).toEqual([
      ["watcher", "agent", "sent"],
      ["monitor", "changed", "sent"],
      ["monitor", "changed", "sent"],
    ]);
    expect(JSON.stringify(listed)).not.toContain(SLACK_TOKEN);
    const metrics = await fetch(`${daemon.url}/metrics`, { headers: daemon.headers() }).then((reply) =>
      reply.text(),
    );
    expect(metrics).toContain('agentd_delivery_attempts_total{status="sent"} 3');

    // when: [failure, waiting]: a failed run; a completed one delivers nothing; a run waiting for an
    // answer, with its dashboard link (last: it holds the agent's one slot).
    const pagerRequests = () => chat.received.filter((request) => request.path === "/pager");
    llm.enqueue(httpErrorReply(400));
    await waitForRunEnd(daemon, await startRun(daemon, "pager", "fail"));
    const failure = await waitFor(() => pagerRequests()[0], "the failure delivery");
    expect((JSON.parse(failure.body) as { text: string }).text).toMatch(/pager failed/);
    llm.enqueue(textReply("all good"));
    await waitForRunEnd(daemon, await startRun(daemon, "pager", "succeed"));
    llm.enqueue(toolCallReply({ name: "ask_human", arguments: { question: "Deploy to production now?" } }));
    const waiting = await startRun(daemon, "pager", "ask before deploying");
    await waitFor(() => pagerRequests().length === 2, "the waiting delivery");
    expect((JSON.parse(pagerRequests()[1]?.body ?? "{}") as { text: string }).text).toMatch(
      new RegExp(`Deploy to production now\\?[\\s\\S]*${daemon.url}/#/runs/${waiting}`),
    );
    const pagerDeliveries = (
      (await daemon.request("GET", "/deliveries?agent=pager")).body as { deliveries: Delivery[] }
    ).deliveries;
    expect(pagerDeliveries.map((delivery) => [delivery.when, delivery.status])).toEqual([
      ["waiting", "sent"],
      ["failure", "sent"],
    ]);
  }, 120_000);

  it("sends a pending delivery after a kill -9 of the daemon", async () => {
    let up = false;
    const hook = await recordingReceiver(kit, () => (up ? 200 : 500));
    const { project } = await kit.scriptedProject(textReply("the digest"));
    project.writeAgent("digest", { deliver: [{ to: "slack", url: `${hook.url}/services/x` }] });
    const first = await kit.daemon(project.configFile);
    await waitForRunEnd(first, await startRun(first, "digest", "write the digest"));
    // Killed once the failed attempt is on disk, not only in memory.
    const kept = path.join(project.dataDirectory, "deliveries.json");
    await waitFor(
      () => existsSync(kept) && readFileSync(kept, "utf8").includes('"retrying"'),
      "a retrying delivery kept",
    );
    await first.kill();
    up = true;
    const second = await kit.daemon(project.configFile);
    const [delivered] = await waitFor(async () => {
      const listed = await deliveries(second);
      return listed[0]?.status === "sent" ? listed : undefined;
    }, "the delivery sent after the restart");
    expect(delivered?.attempts.length).toBeGreaterThanOrEqual(2);
    expect(hook.received.at(-1)?.body).toContain("the digest");
  }, 120_000);
});
