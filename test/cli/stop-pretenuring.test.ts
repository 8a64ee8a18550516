import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/** The built modules (`npm run build` first, as `npm test` does). */
const STOP_PRETENURING = path.resolve(import.meta.dirname, "../../dist/cli/stop-pretenuring.js");
const CODE_CACHE = path.resolve(import.meta.dirname, "../../dist/cli/code-cache.js");

/** Runs a Node process on an ES module script; what it printed. */
function runChild(script: string, nodeOptions: readonly string[] = []): string {
  const child = spawnSync(process.execPath, [...nodeOptions, "--input-type=module", "-e", script], {
    encoding: "utf8",
  });
  expect(child.stderr).toBe("");
  return child.stdout.trim();
}

/**
 * A place that builds connection-like objects, in bursts that all outlive a young collection (the
 * sockets of keep-alive pollers), then how many of 100 more are born in the old generation. A young
 * generation of a fixed size makes each collection one at full size, where V8 decides. One thread:
 * with V8's background compilers and collector tasks, when optimized code replaces the place's
 * first code depends on the machine's load, and on a busy machine V8 sometimes never decided (2 of
 * 30 runs at load 4 printed 0 without the call; 0 of 150 on one thread).
 */
function bornOld(stopFirst: boolean): string {
  const script = `${stopFirst ? `(await import(${JSON.stringify(STOP_PRETENURING)})).stopPretenuring();` : ""}
const young = new Function("object", "return %InYoungGeneration(object)");
const connection = () => ({ close: undefined, error: undefined, data: undefined, end: undefined });
const kept = [];
for (let burst = 0; burst < 20; burst++) {
  for (let index = 0; index < 2000; index++) kept.push(connection());
  globalThis.gc({ type: "minor" });
}
let old = 0;
for (let index = 0; index < 100; index++) if (!young(connection())) old++;
console.log(old);`;
  return runChild(script, [
    "--single-threaded",
    "--allow-natives-syntax",
    "--expose-gc",
    "--min-semi-space-size=1",
    "--max-semi-space-size=1",
  ]);
}

describe("stopPretenuring", () => {
  it("has objects born young at a place whose earlier ones all lived long", () => {
    // Without it, V8 builds that place's objects in the old generation from then on.
    expect(bornOld(false)).toBe("100");
    expect(bornOld(true)).toBe("0");
  });

  describe("with a code cache to write", () => {
    let folder: string;
    let bundle: string;
    beforeEach(() => {
      folder = mkdtempSync(path.join(tmpdir(), "agentd-pretenuring-"));
      bundle = path.join(folder, "bundle.cjs");
      writeFileSync(bundle, 'exports.answer = "bundled";');
    });
    afterEach(() => rmSync(folder, { recursive: true, force: true }));

    it("writes it first, so that the next start, before the change, takes it", () => {
      const load = (then: string) =>
        runChild(`import { loadWithCodeCache } from ${JSON.stringify(CODE_CACHE)};
console.log(loadWithCodeCache(${JSON.stringify(bundle)}).answer);
${then}`);
      // A daemon's start: the bundle had no cache, and the flag changes once it is up.
      expect(load(`(await import(${JSON.stringify(STOP_PRETENURING)})).stopPretenuring();`)).toBe("bundled");
      const cache = readFileSync(`${bundle}.cache`);
      // The next start reads it before any flag changes: V8 takes it, so it is not written again.
      expect(load("")).toBe("bundled");
      expect(readFileSync(`${bundle}.cache`).equals(cache)).toBe(true);
    });
  });
});
