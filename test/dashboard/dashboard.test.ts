import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getRun, listRuns } from "../daemon/api-shapes.js";
import { type TempProject } from "../support/temp-project.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { launchTestBrowser, type TestBrowser } from "../support/browser.js";
import { type DaemonProcess } from "../support/daemon-process.js";
import { type ScriptedLlmServer, textReply } from "../support/scripted-llm-server.js";

// One daemon, one scripted model and one chromium for the whole file; the tests run in order and
// each queues the model replies its run needs.
let llm: ScriptedLlmServer;
let workspace: TempProject;
let daemon: DaemonProcess;
let browser: TestBrowser;

const kit = useTestKit("file");
beforeAll(async () => {
  llm = await kit.scriptedLlm();
  workspace = kit.project({ llmUrl: llm.url, config: { sandbox: { allow_unsandboxed: ["loose"] } } });
  mkdirSync(path.join(workspace.root, "work"));
  workspace.writeAgent("writer", {
    name: "Report Writer",
    workdir: "work",
    tools: ["write_file"],
    permissions: { ask: ["write_file"] },
    schedule: "0 9 * * 1-5",
  });
  workspace.writeAgent("waiter", { tools: [] });
  workspace.writeAgent("loose", { tools: [], sandbox: "off" });
  workspace.writeAgent("greedy", { tools: [], sandbox: { limits: { processes: 100_000 } } });
  writeFileSync(
    path.join(workspace.root, "agents", "broken.md"),
    "---\ndescription: an agent with a bad limit\nlimits:\n  timeout: forever\n---\nNothing.\n",
  );
  daemon = await kit.daemon(workspace.configFile);
  browser = await launchTestBrowser(daemon.url);
  // A daemon with an API token (generated into data_dir) is entered through its login URL, as a
  // person would from the start-up line; the page then runs on the session cookie.
  const tokenFile = path.join(workspace.dataDirectory, "api.token");
  if (existsSync(tokenFile)) {
    const token = readFileSync(tokenFile, "utf8").trim();
    await browser.page.goto(`/auth/login?token=${encodeURIComponent(token)}`);
  }
}, 120_000);

// A failed step leaves a picture of what the page showed, and says in the test output (all CI
// keeps) what the page showed and which of its requests failed.
afterEach(async (context) => {
  if (context.task.result?.state === "fail") {
    console.error(`the page when "${context.task.name}" failed:\n${await browser.describe()}`);
    await browser.screenshot(`failed-${context.task.name.slice(0, 40).replaceAll(/\W+/g, "-")}`);
  }
});

afterAll(async () => {
  await browser?.close();
});

describe("the dashboard in a real browser", () => {
  it("lists the agents, invalid ones first with file, line and field, and shows a new file at once", async () => {
    const { page } = browser;
    await page.goto("/");
    await page.locator('tr[data-agent="writer"]').waitFor();
    await expect(page.locator('tr[data-agent="writer"]').textContent()).resolves.toContain("Report Writer");
    const invalid = page.locator('.panel-invalid li[data-agent="broken"]');
    await invalid.waitFor();
    const errorText = (await invalid.textContent()) ?? "";
    expect(errorText).toContain("broken.md");
    expect(errorText).toContain("limits.timeout");
    await browser.screenshot("agents");

    workspace.writeAgent("fresh", { tools: [] });
    await page.locator('tr[data-agent="fresh"]').waitFor({ timeout: 15_000 });

    await page.setViewportSize({ width: 390, height: 844 });
    await browser.screenshot("agents-phone");
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it("starts a run from the page, streams its events, and approves its ask call so the tool runs", async () => {
    const { page } = browser;
    llm.enqueue(
      textReply("I will write the report now.", {
        toolCalls: [{ name: "write_file", arguments: { path: "report.md", content: "weekly report" } }],
      }),
      textReply("The report is written."),
    );
    await page.goto("/#/agents/writer");
    await page.getByLabel("Task").fill("write the weekly report");
    await browser.screenshot("agent");
    await page.getByRole("button", { name: "Run now" }).click();
    await page.waitForURL(/#\/runs\/r_/);
    const runId = decodeURIComponent(page.url().split("#/runs/")[1] ?? "");

    // The approval arrives live on the run's timeline and in the badge of every page.
    const approval = page.locator("li.row-call .approval-line");
    await approval.getByRole("button", { name: "Approve", exact: true }).waitFor();
    await page.locator("li.row-thought", { hasText: "write the report now" }).waitFor();
    await page.locator("header.top .badge-active").waitFor();
    await page.goto("/#/approvals");
    const card = page.locator("li.card[data-approval]");
    await card.waitFor();
    await expect(card.textContent()).resolves.toContain("write_file");
    await browser.screenshot("approvals");
    await card.getByRole("button", { name: "Approve", exact: true }).click();
    await page.getByText("Nothing waits for an approval.").waitFor();

    await page.goto(`/#/runs/${runId}`);
    await page.locator("li.row-result").waitFor();
    // The header is the run's record, fetched again once the stream shows the run ended: it comes
    // after the timeline's result row, so each value is waited for, not read once.
    await page.locator("li.row-call summary .pill", { hasText: /^ok$/ }).waitFor();
    await page.locator(".run-header .pill", { hasText: "completed" }).first().waitFor();
    expect(readFileSync(path.join(workspace.root, "work", "report.md"), "utf8")).toBe("weekly report");
    await page.locator("li.row-call summary").first().click();
    await browser.screenshot("run");
    expect((await getRun(daemon, runId)).status).toBe("completed");
  });

  it("stops a running run from its page", async () => {
    const { page } = browser;
    llm.enqueue({ type: "hang" });
    await page.goto("/#/agents/waiter");
    await page.getByLabel("Task").fill("wait for the model");
    await page.getByRole("button", { name: "Run now" }).click();
    await page.waitForURL(/#\/runs\/r_/);
    const runId = decodeURIComponent(page.url().split("#/runs/")[1] ?? "");
    await page.locator(".run-header .pill-running").waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    await page.locator(".run-header .pill-stopped").waitFor();
    const run = await getRun(daemon, runId);
    expect(run.status).toBe("stopped");
    expect(run.reason).toBe("user_stop");
  });

  it("shows the live feed and the cost view, and logged no console error", async () => {
    const { page } = browser;
    await page.goto("/#/feed");
    await page.locator('li.feed-row[data-type="result"]').first().waitFor();
    await browser.screenshot("feed");
    await page.goto("/#/activity");
    await page.getByRole("heading", { name: "Cost and activity" }).waitFor();
    await waitFor(
      async () => ((await page.locator(".stat-value").first().textContent()) === "2" ? true : undefined),
      "2 runs",
    );
    await browser.screenshot("activity");
    expect((await listRuns(daemon)).length).toBe(2);
    expect(existsSync(path.join(workspace.root, "work", "report.md"))).toBe(true);
    expect(browser.consoleErrors).toEqual([]);
  });

  it("marks an agent without its sandbox, and its runs, as unsandboxed", async () => {
    const { page } = browser;
    await page.goto("/");
    const badge = page.locator('tr[data-agent="loose"] .pill-unsandboxed');
    await badge.waitFor();
    await expect(badge.textContent()).resolves.toBe("unsandboxed");
    await expect(page.locator('tr[data-agent="writer"] .pill-unsandboxed').count()).resolves.toBe(0);

    await page.goto("/#/agents/writer");
    await page
      .locator(".panel-sandbox .sandbox-view", { hasText: path.join(realpathSync(workspace.root), "work") })
      .waitFor();
    await expect(page.locator(".view-header .pill-unsandboxed").count()).resolves.toBe(0);

    llm.enqueue(textReply("Done without a fence."));
    await page.goto("/#/agents/loose");
    await page.locator(".view-header .pill-unsandboxed").waitFor();
    await page.locator(".panel-sandbox", { hasText: "No sandbox" }).waitFor();
    await page.getByLabel("Task").fill("run loose");
    await page.getByRole("button", { name: "Run now" }).click();
    await page.waitForURL(/#\/runs\/r_/);
    await page.locator(".view-header .pill-unsandboxed").waitFor();
    await page.locator('li[data-type="warning"]', { hasText: "UNSANDBOXED" }).first().waitFor();
    await browser.screenshot("run-unsandboxed");
    await page.goto("/#/agents/loose");
    await page.locator("table.runs-table .pill-unsandboxed").first().waitFor();
    expect(browser.consoleErrors).toEqual([]);
  });

  it("lists an agent's warnings on its page: a sandbox limit its file may not raise", async () => {
    const { page } = browser;
    await page.goto("/#/agents/greedy");
    await page
      .locator(".panel-warnings li", { hasText: "sandbox.limits.processes: 100000 is ignored, 1024 applies" })
      .waitFor();
    expect(browser.consoleErrors).toEqual([]);
  });

  it("shows the page a link names when it is followed while the dashboard still loads", async () => {
    const { page } = browser;
    // The hash changes once the app has rendered its first view but before its effects ran: the
    // moment a link followed during the load (or a test's next goto) lands in.
    await page.addInitScript(
      `if (location.hash === "#/while-loading")
         document.addEventListener("DOMContentLoaded", () => { location.hash = "#/agents/waiter"; });`,
    );
    // A fresh load of the page, not a hash change on the one open.
    await page.goto("about:blank");
    await page.goto("/#/while-loading");
    await page.locator(".view-header h1", { hasText: "waiter" }).waitFor();
    await page.locator(".view-header .breadcrumb", { hasText: "Agents" }).waitFor();
  });

  it("hides from a read token what it cannot do, and names the session's token and role", async () => {
    const { page } = browser;
    const created = await daemon.request("POST", "/tokens", { name: "viewer", role: "read" });
    expect(created.status).toBe(201);
    const token = (created.body as { token: string }).token;
    const [run] = await listRuns(daemon, "?agent=waiter");
    await page.goto(`/auth/login?token=${encodeURIComponent(token)}`);
    await page.goto("/#/agents/waiter");
    await page.locator(".session-role", { hasText: "viewer · read" }).waitFor();
    await page.locator("table.runs-table").first().waitFor();
    await expect(page.getByRole("button", { name: "Run now" }).count()).resolves.toBe(0);
    await page.goto(`/#/runs/${run?.id ?? ""}`);
    await page.locator(".run-header").waitFor();
    await expect(page.locator(".run-header .controls").isVisible()).resolves.toBe(false);
  });
});
