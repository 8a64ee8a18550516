import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

/** Debian's chromium, installed on every machine and in CI (`.ci/run`). */
const CHROMIUM = process.env["AGENTD_CHROMIUM"] ?? "/usr/bin/chromium";
/** Screenshots for a person to look at; gitignored. */
export const ARTEFACTS_DIRECTORY = path.resolve(import.meta.dirname, "../../test-artefacts");

/** A real headless chromium with a fresh profile, and the console errors of its pages. */
export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught exceptions of every page so far. */
  consoleErrors: string[];
  /** Requests that failed or were answered with an error status, for the report of a failed test. */
  failedRequests: string[];
  /** What the page shows and what went wrong so far: the URL, the start of its text, errors and failed requests. */
  describe(page?: Page): Promise<string>;
  /** Saves a full-page screenshot as test-artefacts/<name>.png. */
  screenshot(name: string, page?: Page): Promise<void>;
  close(): Promise<void>;
}

export async function launchTestBrowser(baseUrl: string): Promise<TestBrowser> {
  const profile = mkdtempSync(path.join(tmpdir(), "agentd-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    baseURL: baseUrl,
    viewport: { width: 1280, height: 860 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
  const consoleErrors: string[] = [];
  const failedRequests: string[] = [];
  const watch = (page: Page) => {
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on("pageerror", (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
    page.on("requestfailed", (request) =>
      failedRequests.push(
        `${request.method()} ${request.url()}: ${request.failure()?.errorText ?? "failed"}`,
      ),
    );
    page.on("response", (response) => {
      if (response.status() >= 400)
        failedRequests.push(`${response.request().method()} ${response.url()}: ${response.status()}`);
    });
    page.on("crash", () => consoleErrors.push(`${page.url()}: the page crashed`));
  };
  context.on("page", watch);
  const page = context.pages()[0] ?? (await context.newPage());
  watch(page);
  mkdirSync(ARTEFACTS_DIRECTORY, { recursive: true });
  return {
    context,
    page,
    consoleErrors,
    failedRequests,
    describe: async (target = page) => {
      const text = await target
        .evaluate("document.body?.innerText ?? ''")
        .then((value) => String(value).slice(0, 2_000))
        .catch((error: unknown) => `(no text: ${String(error)})`);
      return [
        `url: ${target.url()}`,
        `text: ${JSON.stringify(text)}`,
        `console errors: ${JSON.stringify(consoleErrors)}`,
        `failed requests: ${JSON.stringify(failedRequests)}`,
      ].join("\n");
    },
    screenshot: async (name, target = page) => {
      // From the top, so the sticky navigation is where a person sees it.
      await target.evaluate("window.scrollTo(0, 0)");
      await target.screenshot({ path: path.join(ARTEFACTS_DIRECTORY, `${name}.png`), fullPage: true });
    },
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
