import { appendFileSync, existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { launchTestBrowser, type TestBrowser } from "../support/browser.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();
let browser: TestBrowser | undefined;
afterAll(async () => {
  await browser?.close();
});

/** Events the test adds to the run's log: several of the dashboard's pages. */
const ADDED = 3_000;

describe("the dashboard's page of a long run", () => {
  it("shows the first page of the log and loads the next ones on request, never the whole log", async () => {
    const { project } = await kit.scriptedProject(textReply("done"));
    project.writeAgent("chatty", { tools: [] });
    let daemon = await kit.daemon(project.configFile);
    const run = await startRun(daemon, "chatty", "talk");
    await waitForRunEnd(daemon, run);
    await daemon.kill();

    // A long run, written into its logs as the daemon writes them, while it is stopped.
    const agentLog = path.join(project.dataDirectory, "events", "chatty.jsonl");
    const runLog = path.join(project.dataDirectory, "runs", `${run}.events.jsonl`);
    expect(existsSync(runLog)).toBe(true);
    const lastId = Math.max(
      ...readFileSync(agentLog, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as AgentEvent).id),
    );
    const lines: string[] = [];
    for (let index = 1; index <= ADDED; index++) {
      const event = {
        id: lastId + index,
        agent: "chatty",
        run,
        type: "thought",
        time: new Date().toISOString(),
        data: { text: `line ${index}` },
      };
      lines.push(`${JSON.stringify(event)}\n`);
    }
    appendFileSync(agentLog, lines.join(""));
    appendFileSync(runLog, lines.join(""));

    daemon = await kit.daemon(project.configFile);
    browser = await launchTestBrowser(daemon.url);
    const { page } = browser;
    const tokenFile = path.join(project.dataDirectory, "api.token");
    if (existsSync(tokenFile)) {
      const token = readFileSync(tokenFile, "utf8").trim();
      await page.goto(`/auth/login?token=${encodeURIComponent(token)}`);
    }
    const logRequests: string[] = [];
    page.on("request", (request) => {
      if (request.url().includes(`/runs/${run}/events`)) logRequests.push(request.url());
    });
    await page.goto(`/#/runs/${run}`);
    const loadMore = page.getByRole("button", { name: /Load more events/ });
    await loadMore.waitFor();
    // One page of the log: not the rest.
    expect(logRequests).toHaveLength(1);
    expect(logRequests[0]).toContain("limit=500");
    // The newest rows of what was read show; the page's last event is far from the run's last.
    const lastShown = async () => (await page.locator("li.row-thought").last().textContent()) ?? "";
    const firstPageEnd = await lastShown();
    expect(firstPageEnd).not.toContain(`line ${ADDED}`);

    await loadMore.click();
    await expect.poll(() => logRequests.length).toBe(2);
    expect(new URL(logRequests[1] ?? "").searchParams.get("after")).not.toBe("0");
    await expect.poll(lastShown).not.toBe(firstPageEnd);
    // Still not the whole log: the button stays for the pages after.
    await loadMore.waitFor();
    expect(await lastShown()).not.toContain(`line ${ADDED}`);
  }, 180_000);
});
