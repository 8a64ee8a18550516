// Dashboard benchmark: first meaningful paint of the agents view with 1,000 agents, and what the
// page transfers. A real daemon (dist/) and Debian's chromium; the baseline, measured in the same
// run on the same daemon build, is the same view with 10 agents.
//   paint     = navigation start → the first page of agent rows is in the DOM and painted
//   transfer  = bytes over the wire for the page, its scripts and styles, and the first GET /agents
// Targets: paint with 1,000 agents < 1.5 s; page files (without data) < 100 KB transferred.
import { spawn } from "node:child_process";
/* global document, requestAnimationFrame, performance, URL -- functions passed to page.evaluate run in the browser */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { QUICK } from "./bench-daemon.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const MAIN = path.join(ROOT, "dist", "cli", "main.js");
const CHROMIUM = process.env.AGENTD_CHROMIUM ?? "/usr/bin/chromium";
const RUNS = QUICK ? 1 : 5;
/**
 * The large project's agents. The quick mode (which checks that the bench runs, not what it
 * measures) loads the baseline alone, on one daemon, and prints it on both lines (ratio 1.00x):
 * a second daemon and page load were half of its time.
 */
const LARGE = QUICK ? 10 : 1_000;
const PAINT_TARGET_MILLISECONDS = 1_500;
const PAGE_TARGET_BYTES = 100 * 1024;

const [loadAverage] = os.loadavg();
console.log(`machine: ${os.cpus().length} cores, load average ${loadAverage?.toFixed(1)}`);

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
});
try {
  const baseline = await measure(10);
  const large = LARGE === 10 ? baseline : await measure(LARGE);
  console.log("\nagents view, median of %d loads (fresh browser context each)", RUNS);
  print("10 agents (baseline)", baseline);
  print(`${LARGE} agents`, large);
  console.log(`  paint ratio ${LARGE} / 10 agents: ${(large.paint / baseline.paint).toFixed(2)}x`);
  console.log(
    `\ntargets: paint ${large.paint.toFixed(0)} ms ${large.paint < PAINT_TARGET_MILLISECONDS ? "<" : "≥"} ${PAINT_TARGET_MILLISECONDS} ms; ` +
      `page files ${kilobytes(large.pageBytes)} ${large.pageBytes < PAGE_TARGET_BYTES ? "<" : "≥"} ${kilobytes(PAGE_TARGET_BYTES)}`,
  );
} finally {
  await browser.close();
}

function print(label, result) {
  console.log(
    `  ${label.padEnd(22)} paint ${result.paint.toFixed(0).padStart(5)} ms · LCP ${result.largestPaint.toFixed(0).padStart(5)} ms · ` +
      `page files ${kilobytes(result.pageBytes)} (${result.pageFiles} files, ${kilobytes(result.pageDecodedBytes)} unzipped) · ` +
      `GET /agents ${kilobytes(result.agentsBytes)}`,
  );
}

function kilobytes(bytes) {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

/** Starts a daemon on `count` agents and loads its agents view RUNS times. */
async function measure(count) {
  const project = mkdtempSync(path.join(tmpdir(), "agentd-bench-dashboard-"));
  const daemon = await startDaemon(project, count);
  // The API and the page ask for the token the daemon wrote (the page logs in with it once).
  const token = readFileSync(path.join(project, "data", "api.token"), "utf8").trim();
  try {
    const samples = [];
    for (let run = 0; run < RUNS; run += 1) samples.push(await loadOnce(daemon.url, count, token));
    const median = (key) =>
      samples.map((sample) => sample[key]).sort((left, right) => left - right)[Math.floor(RUNS / 2)];
    return {
      paint: median("paint"),
      largestPaint: median("largestPaint"),
      pageBytes: median("pageBytes"),
      pageDecodedBytes: median("pageDecodedBytes"),
      pageFiles: median("pageFiles"),
      agentsBytes: median("agentsBytes"),
    };
  } finally {
    daemon.stop();
    rmSync(project, { recursive: true, force: true });
  }
}

async function loadOnce(url, count, token) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  await page.goto(`${url}/auth/login?token=${encodeURIComponent(token)}`);
  await page.goto(`${url}/`);
  await page.waitForFunction(
    (expected) => document.querySelectorAll("tr[data-agent]").length >= expected,
    Math.min(count, 100),
    { timeout: 120_000 },
  );
  // The rows are painted at the next frame after they are in the DOM.
  const timings = await page.evaluate(
    () =>
      new Promise((resolve) =>
        requestAnimationFrame(() => {
          const paint = performance.now();
          const entries = performance.getEntriesByType("largest-contentful-paint");
          const resources = performance.getEntriesByType("resource");
          const navigation = performance.getEntriesByType("navigation")[0];
          const files = resources.filter((entry) => new URL(entry.name).pathname.startsWith("/ui/"));
          const agents = resources.find((entry) => new URL(entry.name).pathname === "/agents");
          resolve({
            paint,
            largestPaint: entries.at(-1)?.startTime ?? paint,
            pageBytes: files.reduce((sum, entry) => sum + entry.transferSize, navigation?.transferSize ?? 0),
            pageDecodedBytes: files.reduce(
              (sum, entry) => sum + entry.decodedBodySize,
              navigation?.decodedBodySize ?? 0,
            ),
            pageFiles: files.length + 1,
            agentsBytes: agents?.transferSize ?? 0,
          });
        }),
      ),
  );
  await context.close();
  return timings;
}

async function startDaemon(project, count) {
  const agents = path.join(project, "agents");
  mkdirSync(agents);
  for (let index = 0; index < count; index += 1) {
    const id = `agent-${String(index).padStart(4, "0")}`;
    const schedule = index % 3 === 0 ? `schedule: "${index % 60} 9 * * 1-5"\n` : "";
    writeFileSync(
      path.join(agents, `${id}.md`),
      `---\nname: Agent ${index}\ndescription: Bench agent number ${index} that watches something\n${schedule}---\nDo the task.\n`,
    );
  }
  const configFile = path.join(project, "config.yaml");
  writeFileSync(
    configFile,
    `agents_dir: ./agents\npresets_dir: ./presets\ndata_dir: ./data\nserver: { host: 127.0.0.1, port: 0 }\nllm: { base_url: "http://127.0.0.1:9/v1", api_key: bench, model: bench }\nlog: { level: warn, pretty: false }\n`,
  );
  mkdirSync(path.join(project, "presets"));
  const child = spawn(process.execPath, [MAIN, "start", "--config", configFile], {
    cwd: project,
    stdio: ["ignore", "pipe", "ignore"],
    detached: true,
  });
  const url = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      try {
        const parsed = JSON.parse(line);
        if (parsed.event === "listening") resolve(parsed.url);
      } catch {
        // not the listening line
      }
    });
    child.once("exit", (code) => reject(new Error(`the daemon exited (${code}) before listening`)));
  });
  return {
    url,
    stop: () => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}
