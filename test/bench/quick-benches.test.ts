import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The benches with a quick mode (`--quick`: a few iterations), run as `npm run bench` runs them,
 * on the built daemon: a bench that no longer runs fails here, not months later. Nothing they
 * print is judged but that they print their ratios: the suite checks behaviour, never a timing.
 */
const QUICK_BENCHES: Array<{ bench: string; prints: RegExp[]; timeoutMilliseconds?: number }> = [
  {
    bench: "cron-lateness.bench.mjs",
    // On a loaded machine a one-second window may see no run start: the line is printed all the same.
    prints: [/ratio running\/croner: p50 /, /ratio model request\/croner: p50 /],
  },
  {
    bench: "api-poll.bench.mjs",
    prints: [/server CPU per poll \/ bare: /, /server CPU per SSE replay \/ bare: /],
  },
  {
    bench: "cluster-growth.bench.mjs",
    prints: [/write latency ratio after 10\/1: /, /runs\/s ratio to 1 node: 2 nodes /],
    // PostgreSQL and three daemons to start: slow on a loaded machine.
    timeoutMilliseconds: 300_000,
  },
];

async function runQuick(bench: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--expose-gc", path.join(root, "scripts/bench", bench), "--quick"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => (output += text));
  child.stderr.setEncoding("utf8").on("data", (text: string) => (output += text));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, output };
}

describe("benches in their quick mode", () => {
  for (const { bench, prints, timeoutMilliseconds } of QUICK_BENCHES) {
    it(`${bench} runs and prints its ratios`, { timeout: timeoutMilliseconds ?? 120_000 }, async () => {
      const { code, output } = await runQuick(bench);
      expect(code, output).toBe(0);
      for (const line of prints) expect(output).toMatch(line);
    });
  }
});
