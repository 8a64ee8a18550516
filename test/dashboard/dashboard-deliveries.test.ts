import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getRun, startRun } from "../daemon/api-shapes.js";
import { launchTestBrowser, type TestBrowser } from "../support/browser.js";
import { closedPort } from "../support/closed-port.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { agentd } from "../support/agentd-cli.js";

// The dashboard's deliveries (an agent's page, a run's page) and its Triggers page, on a real
// daemon and a real browser: one target that takes the message, one whose receiver is down.
const HOOK_SECRET = "dashboard-hook-secret-0123456789";
let daemon: DaemonProcess;
let browser: TestBrowser;
let configFile: string;

const kit = useTestKit("file");
beforeAll(async () => {
  const { project } = await kit.scriptedProject(textReply("The digest is ready."), {
    config: { vault: { backend: "env" } },
  });
  const downPort = await closedPort();
  project.writeAgent("digest", {
    deliver: [
      { to: "file", path: "digest.log" },
      { to: "slack", url: `http://127.0.0.1:${downPort}/services/T000/B000/XXXX` },
    ],
    triggers: [{ webhook: "poke", secret: "{{secret:poke_hook}}", signature: "bearer" }],
  });
  configFile = project.configFile;
  daemon = await kit.daemon(project.configFile, { environment: { AGENTD_SECRET_POKE_HOOK: HOOK_SECRET } });
  browser = await launchTestBrowser(daemon.url);
  const tokenFile = path.join(project.dataDirectory, "api.token");
  if (existsSync(tokenFile)) {
    const token = readFileSync(tokenFile, "utf8").trim();
    await browser.page.goto(`/auth/login?token=${encodeURIComponent(token)}`);
  }
}, 120_000);

afterEach(async (context) => {
  if (context.task.result?.state === "fail") {
    console.error(`the page when "${context.task.name}" failed:\n${await browser.describe()}`);
    await browser.screenshot(`failed-${context.task.name.slice(0, 40).replaceAll(/\W+/g, "-")}`);
  }
});

afterAll(async () => {
  await browser?.close();
});

/** Waits until the run's file delivery is sent and its Slack delivery's first attempt failed. */
async function deliveriesSettled(runId: string): Promise<void> {
  await waitFor(async () => {
    const reply = await daemon.request("GET", `/deliveries?run=${runId}`);
    const statuses = (reply.body as { deliveries: Array<{ status: string }> }).deliveries.map(
      (d) => d.status,
    );
    return statuses.includes("sent") && statuses.includes("retrying");
  }, `run ${runId}'s deliveries: one sent, one retrying`);
}

describe("deliveries and triggers in the dashboard", { timeout: 120_000 }, () => {
  it("shows a run's deliveries on its page and its agent's: target, status, attempts, last error, next retry", async () => {
    const runId = await startRun(daemon, "digest", "send the digest");
    await waitFor(async () => (await getRun(daemon, runId)).status === "completed", "the run ends");
    // Readiness: the file target sent, the Slack target's first attempt failed and another is due.
    await deliveriesSettled(runId);

    const { page } = browser;
    await page.goto(`/#/runs/${runId}`);
    const panel = page.locator(".panel-deliveries");
    const sent = panel.locator("tr[data-target='file#0']");
    const retrying = panel.locator("tr[data-target='slack#1']");
    await sent.waitFor();
    await expect(sent.locator(".pill").textContent()).resolves.toBe("sent");
    await expect(sent.locator("td.attempts").textContent()).resolves.toBe("1");
    await expect(retrying.locator(".pill").textContent()).resolves.toBe("retrying");
    await expect(retrying.locator("td.last-error").textContent()).resolves.toMatch(
      /ECONNREFUSED|connect|refused/i,
    );
    // The next retry is a time, not a dash.
    expect(await retrying.locator("td").last().locator("time").count()).toBe(1);
    await browser.screenshot("deliveries-run");

    await page.goto("/#/agents/digest");
    const agentRow = page.locator(".panel-deliveries tr[data-target='slack#1']").first();
    await agentRow.waitFor();
    await expect(agentRow.locator("a").textContent()).resolves.toBe(runId);
    expect(browser.consoleErrors).toEqual([]);
  });

  it("lists triggers with their health on the Triggers page, and shows a run's trigger", async () => {
    const refused = await fetch(`${daemon.url}/hooks/digest/poke`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer wrong" },
      body: "{}",
    });
    expect(refused.status).toBe(401);
    const accepted = await fetch(`${daemon.url}/hooks/digest/poke`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${HOOK_SECRET}`,
        "idempotency-key": "poke-delivery-1",
      },
      body: "{}",
    });
    expect(accepted.status).toBe(202);
    const { run } = (await accepted.json()) as { run: string };
    // This run delivers too: its deliveries settle here (the file's sent, Slack's first attempt
    // failed), not during the next case, which reads each target's health from its newest delivery.
    await deliveriesSettled(run);

    const { page } = browser;
    // The run's page and its agent's runs table say what started it.
    await page.goto(`/#/runs/${run}`);
    await expect(page.locator(".run-trigger").textContent()).resolves.toBe(
      "webhook poke (delivery poke-delivery-1)",
    );
    await page.goto("/#/agents/digest");
    const runRow = page.locator(`.runs-table tr[data-run='${run}']`);
    await runRow.waitFor();
    await expect(runRow.locator("td.trigger-cell").textContent()).resolves.toBe(
      "webhook poke (delivery poke-delivery-1)",
    );
    await expect(page.locator(".runs-table td.trigger-cell").last().textContent()).resolves.toBe("api");

    await page.goto("/#/triggers");
    const row = page.locator("tr[data-trigger='digest/poke']");
    await row.waitFor();
    await expect(row.locator(".pill").textContent()).resolves.toBe("accepted");
    await expect(row.locator("td.counts").textContent()).resolves.toBe("accepted 1 · refused 1");
    await expect(row.locator("td.last-error").textContent()).resolves.toMatch(/signature did not verify/);
    expect(await row.textContent()).not.toContain(HOOK_SECRET);
    await browser.screenshot("triggers-page");
    expect(browser.consoleErrors).toEqual([]);
  });

  it("lists the targets with their health on the Deliveries page, at GET /deliveries/targets and in the CLI", async () => {
    // The first case left the file target sent and the Slack target retrying.
    const reply = await daemon.request("GET", "/deliveries/targets");
    expect(reply.status).toBe(200);
    const { targets } = reply.body as {
      targets: Array<{ target: string; destination: string; health: string; when: string[] }>;
    };
    expect(targets.map(({ target, health, when }) => [target, health, when])).toEqual([
      ["file#0", "ok", ["always"]],
      ["slack#1", "retrying", ["always"]],
    ]);
    // A Slack webhook's path is its credential: the host only.
    expect(targets[1]?.destination).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/…$/);
    expect(JSON.stringify(targets)).not.toContain("XXXX");
    const document = (await daemon.request("GET", "/openapi.json")).body as {
      paths: Record<string, { get?: { operationId?: string; "x-agentd-role"?: string } }>;
    };
    expect(document.paths["/deliveries/targets"]?.get).toMatchObject({
      operationId: "listDeliveryTargets",
      "x-agentd-role": "read",
    });

    const printed = await agentd(["deliveries", "--targets", "--config", configFile], {
      environment: { AGENTD_URL: daemon.url, AGENTD_TOKEN: daemon.token ?? "" },
    });
    expect(printed.exitCode, printed.stderr).toBe(0);
    expect(printed.stdout, printed.stdout).toMatch(
      /^digest {2}file#0 \(file, always\) {2}digest\.log {2}ok {2}last \S+Z$/m,
    );
    expect(printed.stdout, printed.stdout).toMatch(
      /^digest {2}slack#1 \(slack, always\) {2}http:\/\/127\.0\.0\.1:\d+\/… {2}retrying .*refused/im,
    );

    const listed = await agentd(["deliveries", "--status", "retrying", "--config", configFile], {
      environment: { AGENTD_URL: daemon.url, AGENTD_TOKEN: daemon.token ?? "" },
    });
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(
      /^d_\w+ {2}\S+Z {2}digest {2}r_\w+ {2}slack#1 \(slack, always\) {2}retrying {2}\d+ attempts? .*refused/im,
    );
    expect(listed.stdout).not.toContain("file#0");

    const { page } = browser;
    await page.goto("/#/deliveries");
    const row = page.locator(".delivery-targets-table tr[data-target='digest/slack#1']");
    await row.waitFor();
    await expect(row.locator("td.health .pill").textContent()).resolves.toBe("retrying");
    await expect(row.locator("td.last-error").textContent()).resolves.toMatch(
      /ECONNREFUSED|connect|refused/i,
    );
    expect(await row.textContent()).not.toContain("XXXX");
    const fileRow = page.locator(".delivery-targets-table tr[data-target='digest/file#0']");
    await expect(fileRow.locator("td.health .pill").textContent()).resolves.toBe("ok");
    // Below the targets, the newest deliveries of every agent.
    await page.locator(".panel-deliveries tr[data-target='slack#1']").first().waitFor();
    await browser.screenshot("deliveries-page");
    expect(browser.consoleErrors).toEqual([]);
  });
});
