import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { listRuns } from "../daemon/api-shapes.js";
import { type TempProject } from "../support/temp-project.js";
import { useTestKit } from "../support/test-kit.js";
import { launchTestBrowser, type TestBrowser } from "../support/browser.js";
import { type DaemonProcess } from "../support/daemon-process.js";
import { type ScriptedLlmServer, textReply } from "../support/scripted-llm-server.js";

// The dashboard in daily use: the call an approval is about beside its buttons, a result read as
// Markdown with nothing of a model's markup run, a run started again, and a phone's width.
let llm: ScriptedLlmServer;
let workspace: TempProject;
let daemon: DaemonProcess;
let browser: TestBrowser;

/** A result a model could write: Markdown, with markup and script links meant to run in the page. */
const RESULT = [
  "# Weekly report",
  "",
  "The report is **written** to `report.md`; see [the docs](https://example.com/docs).",
  "",
  "- one",
  "- two",
  "",
  '<img src="x" onerror="window.__injected = true">',
  "<script>window.__injected = true</script>",
  "[click me](javascript:window.__injected=true)",
].join("\n");

const kit = useTestKit("file");
beforeAll(async () => {
  llm = await kit.scriptedLlm();
  workspace = kit.project({ llmUrl: llm.url });
  mkdirSync(path.join(workspace.root, "work"));
  workspace.writeAgent("writer", {
    name: "Report Writer with a name long enough to push a narrow table past a phone's width",
    workdir: "work",
    tools: ["write_file"],
    permissions: { ask: ["write_file"] },
    schedule: "0 9 * * 1-5",
  });
  daemon = await kit.daemon(workspace.configFile);
  browser = await launchTestBrowser(daemon.url);
  const tokenFile = path.join(workspace.dataDirectory, "api.token");
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

describe("the dashboard in daily use", () => {
  it("shows the arguments beside Approve with their bidi overrides and invisible characters escaped", async () => {
    const { page } = browser;
    // Shown raw, U+202E would reverse the rest of the line: the operator would read another path.
    const target = "notes/\u202Etxt.hs\u200B.report";
    llm.enqueue(
      textReply("Writing.", {
        toolCalls: [{ name: "write_file", arguments: { path: target, content: "x" } }],
      }),
      textReply("done"),
    );
    await page.goto("/#/agents/writer");
    await page.getByLabel("Task").fill("write the notes");
    await page.getByRole("button", { name: "Run now" }).click();
    await page.waitForURL(/#\/runs\/r_/);
    const line = page.locator("li.row-call .approval-line");
    const deny = line.getByRole("button", { name: "Deny", exact: true });
    await deny.waitFor();
    const shown = (await line.locator(".approval-call pre").textContent()) ?? "";
    expect(shown).toContain(String.raw`"path": "notes/\u202etxt.hs\u200b.report"`);
    expect(shown).not.toMatch(/[\u202e\u200b]/);
    await deny.click();
  });

  it("shows the call beside its Approve button, then the result as safe Markdown, and runs it again", async () => {
    const { page } = browser;
    llm.enqueue(
      textReply("Writing.", {
        toolCalls: [{ name: "write_file", arguments: { path: "report.md", content: "weekly report" } }],
      }),
      textReply(RESULT),
    );
    await page.goto("/#/agents/writer");
    await page.getByLabel("Task").fill("write the weekly report");
    await page.getByRole("button", { name: "Run now" }).click();
    await page.waitForURL(/#\/runs\/r_/);
    const runId = decodeURIComponent(page.url().split("#/runs/")[1] ?? "");

    // The button and the call it approves are on screen together, the tool row still closed.
    const line = page.locator("li.row-call .approval-line");
    const approve = line.getByRole("button", { name: "Approve", exact: true });
    await approve.waitFor();
    const call = line.locator(".approval-call");
    await expect(call.locator("code.tool").textContent()).resolves.toBe("write_file");
    await expect(call.textContent()).resolves.toContain('"path": "report.md"');
    await expect(call.textContent()).resolves.toContain("asks because: write_file asks");
    expect(await call.isVisible()).toBe(true);
    expect(await page.locator("li.row-call details").getAttribute("open")).toBeNull();
    await browser.screenshot("daily-approval");
    await approve.click();

    // The result: headings, bold, code, lists and an http link rendered; the markup only as text.
    const result = page.locator("li.row-result .markdown");
    await result.waitFor();
    await expect(result.locator("h3").textContent()).resolves.toBe("Weekly report");
    await expect(result.locator("strong").allTextContents()).resolves.toEqual(["written"]);
    await expect(result.locator("code").first().textContent()).resolves.toBe("report.md");
    await expect(result.locator("li").count()).resolves.toBe(2);
    await expect(result.locator("a").count()).resolves.toBe(1);
    await expect(result.locator("a").getAttribute("href")).resolves.toBe("https://example.com/docs");
    await expect(result.locator("img, script").count()).resolves.toBe(0);
    await expect(result.textContent()).resolves.toContain('<img src="x" onerror=');
    await expect(result.textContent()).resolves.toContain("click me");
    expect(await page.evaluate<unknown>("window.__injected")).toBeUndefined();
    await browser.screenshot("daily-result");

    // Run again: a new run of the same task.
    await page.locator(".run-header .pill", { hasText: "completed" }).first().waitFor();
    llm.enqueue(textReply("Nothing to write this time."));
    await page.getByRole("button", { name: "Run again" }).click();
    await page.waitForURL((url) => url.hash.startsWith("#/runs/r_") && !url.hash.endsWith(runId));
    const again = decodeURIComponent(page.url().split("#/runs/")[1] ?? "");
    const runs = await listRuns(daemon);
    expect(runs.find((run) => run.id === again)?.task).toBe("write the weekly report");
    expect(browser.consoleErrors).toEqual([]);
  });

  it.each([
    ["the agents page", "/#/", "tr[data-agent='writer']"],
    ["the agent page", "/#/agents/writer", "table.runs-table"],
    ["the activity page", "/#/activity", ".stat-value"],
    ["the approvals page", "/#/approvals", "h1"],
  ])("fits %s in a phone's 390 px without sideways scrolling", async (_name, url, ready) => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(url);
      await page.locator(ready).first().waitFor();
      const width = await page.evaluate<number>("document.documentElement.scrollWidth");
      await browser.screenshot(`phone-${url.replaceAll(/\W+/g, "-")}`);
      expect(width).toBeLessThanOrEqual(390);
      // The agents list, the agent's runs and the activity table fit whole: no column hidden behind their own scrolling.
      if (url === "/#/" || url === "/#/activity" || url === "/#/agents/writer") {
        // In the page (a string: this file is compiled without the DOM's types).
        const scrolled = await page.evaluate<number[]>(
          '[...document.querySelectorAll(".table-scroll")].map((element) => element.scrollWidth - element.clientWidth)',
        );
        expect(scrolled.every((extra) => extra <= 0)).toBe(true);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
  });
});
