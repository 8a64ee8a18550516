import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/** The built module (`npm run build` first, as `npm test` does): the cache is written as a process exits. */
const CODE_CACHE = path.resolve(import.meta.dirname, "../../dist/cli/code-cache.js");

describe("loadWithCodeCache", () => {
  let folder: string;
  let bundle: string;
  beforeEach(() => {
    folder = mkdtempSync(path.join(tmpdir(), "agentd-code-cache-"));
    bundle = path.join(folder, "bundle.cjs");
    writeFileSync(
      bundle,
      [
        'const path = require("node:path");',
        "exports.where = path.basename(__filename) + ' in ' + path.basename(__dirname);",
        // What the bundle leaves out is required from the bundle's own folder.
        'exports.load = async () => require("./beside.cjs");',
      ].join("\n"),
    );
    writeFileSync(path.join(folder, "beside.cjs"), 'module.exports = "beside";');
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  /** Runs a Node process that loads the bundle through the cache; what it printed. */
  function loadInChild(file = bundle): string {
    const script = `import { loadWithCodeCache } from ${JSON.stringify(CODE_CACHE)};
const loaded = loadWithCodeCache(${JSON.stringify(file)});
console.log(loaded === undefined ? "no bundle" : loaded.where + ", require " + (await loaded.load()));`;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(child.stderr).toBe("");
    return child.stdout.trim();
  }

  it("runs the bundle as require would, and keeps its compiled code for the next process", () => {
    expect(loadInChild()).toBe(`bundle.cjs in ${path.basename(folder)}, require beside`);
    expect(existsSync(`${bundle}.cache`)).toBe(true);
    const cache = readFileSync(`${bundle}.cache`);
    expect(loadInChild()).toBe(`bundle.cjs in ${path.basename(folder)}, require beside`);
    // Accepted as it was: not written again.
    expect(readFileSync(`${bundle}.cache`).equals(cache)).toBe(true);
  });

  it("compiles again, and rewrites the cache, when V8 refuses it", () => {
    writeFileSync(`${bundle}.cache`, "not a code cache");
    expect(loadInChild()).toBe(`bundle.cjs in ${path.basename(folder)}, require beside`);
    expect(readFileSync(`${bundle}.cache`, "utf8")).not.toBe("not a code cache");
  });

  it("answers undefined when there is no bundle", () => {
    expect(loadInChild(path.join(folder, "missing.cjs"))).toBe("no bundle");
    expect(existsSync(path.join(folder, "missing.cjs.cache"))).toBe(false);
  });
});
