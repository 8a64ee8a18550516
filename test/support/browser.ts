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
  const watch = (page: Page) => {
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on("pageerror", (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
  };
  context.on("page", watch);
  const page = context.pages()[0] ?? (await context.newPage());
  watch(page);
  mkdirSync(ARTEFACTS_DIRECTORY, { recursive: true });
  return {
    context,
    page,
    consoleErrors,
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
