import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { launchTestBrowser, type TestBrowser } from "../support/browser.js";
import { type DaemonProcess } from "../support/daemon-process.js";
import { type ScriptedLlmServer, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { type TempProject } from "../support/temp-project.js";
import { useTestKit } from "../support/test-kit.js";

// The agent page's controls in a real browser: the on/off switch, and the memory with its history,
// edited there, with a stale edit refused plainly and kept.
let llm: ScriptedLlmServer;
let project: TempProject;
let daemon: DaemonProcess;
let browser: TestBrowser;

const kit = useTestKit("file");
beforeAll(async () => {
  llm = await kit.scriptedLlm();
  project = kit.project({ llmUrl: llm.url });
  project.writeAgent("ticker", { schedule: "0 9 * * *", task: "tick" });
  project.writeAgent("notes", { memory: "write", task: "learn" });
  daemon = await kit.daemon(project.configFile);
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

interface MemoryBody {
  content: string;
  version: string;
}

describe("the agent page's controls", { timeout: 60_000 }, () => {
  it("turns an agent off and on with its switch, and the agents list says who turned it off", async () => {
    const { page } = browser;
    await page.goto("/#/agents/ticker");
    const toggle = page.getByRole("switch", { name: "Enabled" });
    await page.locator(".agent-switch[data-enabled='true']").waitFor();
    await toggle.click();
    await page.locator(".agent-switch[data-enabled='false']").waitFor();
    await expect(page.locator(".switch-text").textContent()).resolves.toContain(
      "disabled by dashboard:default",
    );
    expect(await page.getByRole("button", { name: "Run now" }).isDisabled()).toBe(true);
    const detail = (await daemon.request("GET", "/agents/ticker")).body as Record<string, unknown>;
    expect(detail).toMatchObject({ enabled: false, next_fire: null });
    await browser.screenshot("agent-switched-off");

    await page.goto("/#/");
    const cell = page.locator("tr[data-agent='ticker'] td[data-label='Enabled']");
    await cell.getByText("disabled by").waitFor();

    await page.goto("/#/agents/ticker");
    await page.getByRole("switch", { name: "Enabled" }).click();
    await page.locator(".agent-switch[data-enabled='true']").waitFor();
    expect((await daemon.request("GET", "/agents/ticker")).body).toMatchObject({ enabled: true });
    expect(browser.consoleErrors).toEqual([]);
  });

  it("shows the memory's history and saves an edit, refusing a stale one with the edit kept", async () => {
    const { page } = browser;
    llm.enqueue(
      toolCallReply({ name: "memory_add", arguments: { text: "Builds use pnpm." } }),
      textReply("noted"),
    );
    const run = await startRun(daemon, "notes", "learn");
    await waitForRunEnd(daemon, run);

    await page.goto("/#/agents/notes");
    const panel = page.locator(".panel-memory");
    await panel.locator("pre.memory-content", { hasText: "Builds use pnpm." }).waitFor();
    const added = panel.locator(".memory-history li[data-operation='add']");
    await added.waitFor();
    await expect(added.locator(".change-by a").getAttribute("href")).resolves.toBe(`#/runs/${run}`);
    await expect(added.locator(".change-added").textContent()).resolves.toContain("Builds use pnpm.");

    // An edit saved: the history tells the operator's change line by line.
    await panel.getByRole("button", { name: "Edit" }).click();
    await panel.getByLabel("Memory").fill("Builds use pnpm.\nDeploys on Tuesdays.\n");
    await panel.getByRole("button", { name: "Save" }).click();
    const set = panel.locator(".memory-history li[data-operation='set']").first();
    await set.waitFor();
    await expect(set.locator(".change-by").textContent()).resolves.toContain("operator (dashboard");
    await expect(set.locator(".change-added").allTextContents()).resolves.toEqual(["+ Deploys on Tuesdays."]);

    // A stale edit: someone saves while the editor is open; Save is refused, the edit is kept.
    await panel.getByRole("button", { name: "Edit" }).click();
    await panel.getByLabel("Memory").fill("My edit.\n");
    const before = (await daemon.request("GET", "/agents/notes/memory")).body as MemoryBody;
    const other = await daemon.request("PUT", "/agents/notes/memory", {
      content: "Written meanwhile.\n",
      version: before.version,
    });
    expect(other.status).toBe(200);
    await panel.getByRole("button", { name: "Save" }).click();
    await panel.locator(".banner", { hasText: "Not saved: the memory changed" }).waitFor();
    await expect(panel.getByLabel("Memory").inputValue()).resolves.toBe("My edit.\n");
    await panel.locator(".memory-latest pre", { hasText: "Written meanwhile." }).waitFor();
    await browser.screenshot("memory-conflict");
    const kept = (await daemon.request("GET", "/agents/notes/memory")).body as MemoryBody;
    expect(kept.content).toBe("Written meanwhile.\n");

    // Saving again lands on the version now shown.
    await panel.getByRole("button", { name: "Save" }).click();
    await panel.locator("pre.memory-content", { hasText: "My edit." }).waitFor();
    expect(((await daemon.request("GET", "/agents/notes/memory")).body as MemoryBody).content).toBe(
      "My edit.\n",
    );
    expect(browser.consoleErrors.filter((line) => !line.includes("409"))).toEqual([]);
  });

  // Last: it logs the browser in with other tokens.
  it("offers the memory's Edit to admin only, and the switch to run", async () => {
    const { page } = browser;
    const loginAs = async (name: string, role: string) => {
      const created = await daemon.request("POST", "/tokens", { name, role });
      expect(created.status).toBe(201);
      const token = (created.body as { token: string }).token;
      await page.goto(`/auth/login?token=${encodeURIComponent(token)}`);
      await page.goto("/#/agents/notes");
      await page.locator(".session-role", { hasText: `${name} · ${role}` }).waitFor();
      await page.locator(".panel-memory").getByRole("button", { name: "Reload" }).waitFor();
    };
    const panel = page.locator(".panel-memory");
    await loginAs("desk-runner", "run");
    await expect(panel.getByRole("button", { name: "Reload" }).count()).resolves.toBe(1);
    await expect(panel.getByRole("button", { name: "Edit" }).count()).resolves.toBe(0);
    await expect(page.getByRole("button", { name: "Run now" }).count()).resolves.toBe(1);
    await loginAs("desk-admin", "admin");
    await expect(panel.getByRole("button", { name: "Edit" }).count()).resolves.toBe(1);
  });
});
