import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchTestBrowser, type TestBrowser } from "../support/browser.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { toolCallReply } from "../support/scripted-llm-server.js";
import { waitFor } from "../support/wait-for.js";

// Every run asks to write a file and waits for a person: a run stays in flight for the stop.
const scripted = useScriptedDaemon({
  reply: toolCallReply({ name: "write_file", arguments: { path: "note.txt", content: "x" } }),
  agents: (project) => {
    mkdirSync(path.join(project.root, "work"));
    project.writeAgent("writer", {
      workdir: "work/writer",
      tools: ["write_file"],
      permissions: { ask: ["write_file"] },
    });
  },
});

let browser: TestBrowser | undefined;
beforeAll(async () => {
  browser = await launchTestBrowser(scripted.daemon.url);
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

/** What the explorer sent and what it showed for one Execute. */
interface Executed {
  request: Request;
  status: string;
  body: string;
}

/**
 * Opens an operation of the explorer, clicks "Try it out", fills its parameters and body as a
 * person types them, clicks Execute and reads the answer it shows.
 */
async function tryItOut(
  page: Page,
  operationId: string,
  parameters: Record<string, string>,
  body?: string,
): Promise<Executed> {
  const block = page.locator(`[id$="-${operationId}"]`);
  await block.locator(".opblock-summary").first().click();
  await block.locator("button.try-out__btn").click();
  for (const [name, value] of Object.entries(parameters)) {
    await block.locator(`tr[data-param-name="${name}"] input`).fill(value);
  }
  if (body !== undefined) await block.locator("textarea.body-param__text").fill(body);
  const sent = page.waitForRequest((request) => !new URL(request.url()).pathname.startsWith("/docs"));
  await block.locator("button.execute").click();
  const request = await sent;
  const answer = block.locator(".live-responses-table tbody tr.response").first();
  const status = answer.locator(".response-col_status");
  await status.waitFor();
  const shown = (await status.innerText()).trim();
  const shownBody = (await answer.locator(".response-col_description pre").first().innerText()).trim();
  return { request, status: shown, body: shownBody };
}

describe("Try it out in /docs", { timeout: 90_000 }, () => {
  it("sends the bearer token and the right content type: a GET, a POST with a body and a bare POST", async () => {
    if (!browser) throw new Error("no browser");
    const { page } = browser;
    const token = scripted.daemon.token ?? "";
    await page.goto("/docs/");
    await page.locator("button.authorize").first().click();
    await page.locator(".auth-container input").first().fill(token);
    await page.locator(".auth-btn-wrapper button.authorize").click();
    await page.locator("button.btn-done").click();

    const started = await tryItOut(page, "startRun", { id: "writer" }, '{"task": "write a note"}');
    expect(started.status, await browser.describe()).toBe("202");
    expect(await started.request.headerValue("authorization")).toBe(`Bearer ${token}`);
    expect(await started.request.headerValue("content-type")).toMatch(/^application\/json/);
    const run = (JSON.parse(started.body) as { run: string }).run;

    const got = await tryItOut(page, "getRun", { run });
    expect(got.status, await browser.describe()).toBe("200");
    expect((JSON.parse(got.body) as { id: string }).id).toBe(run);

    // The run asked to write and waits for a person: in flight, so the stop is taken (200).
    await waitFor(async () => {
      const reply = await scripted.daemon.request("GET", "/approvals");
      return (reply.body as { approvals: Array<{ run: string }> }).approvals.some((each) => each.run === run);
    }, `run ${run} to wait for its approval`);
    const stopped = await tryItOut(page, "stopRun", { run });
    expect(stopped.status, `${stopped.body}\n${await browser.describe()}`).toBe("200");
    expect(await stopped.request.headerValue("authorization")).toBe(`Bearer ${token}`);
    expect(browser.consoleErrors).toEqual([]);
  });
});
