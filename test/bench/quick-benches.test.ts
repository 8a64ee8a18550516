import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const benchFolder = path.join(root, "scripts/bench");

/**
 * Every bench in scripts/bench/ (each `*.bench.mjs`, found by listing the folder, so a bench added
 * tomorrow is covered without editing this file), run in its quick mode (`--quick`: a few
 * iterations) as `npm run bench` runs it, on the built daemon, one after the other: a bench that no
 * longer runs fails here, not months later. Nothing they print is judged but that they follow the
 * contract at the top of docs/benchmarks.md: exit 0 and print at least one ratio and the machine's
 * load. The suite checks behaviour, never a timing.
 */
const benches = readdirSync(benchFolder)
  .filter((file) => file.endsWith(".bench.mjs"))
  .sort();

async function runQuick(bench: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--expose-gc", path.join(benchFolder, bench), "--quick"], {
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
  it("finds the benches by listing their folder", () => {
    expect(benches.length).toBeGreaterThan(10);
  });

  for (const bench of benches) {
    // A loaded 2-core machine stretches a quick bench from seconds to a minute or two.
    it(`${bench} runs and prints its ratios and load`, { timeout: 300_000 }, async () => {
      const { code, output } = await runQuick(bench);
      expect(code, output).toBe(0);
      expect(output, output).toMatch(/ratio/i);
      expect(output, output).toMatch(/load/i);
    });
  }
});
