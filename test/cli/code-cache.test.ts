import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
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

  /** The script of a Node process that loads the bundle through the cache and prints what it got. */
  function loadingScript(file: string, cacheFile?: string): string {
    const cacheArgument = cacheFile === undefined ? "" : `, ${JSON.stringify(cacheFile)}`;
    return `import { loadWithCodeCache } from ${JSON.stringify(CODE_CACHE)};
const loaded = loadWithCodeCache(${JSON.stringify(file)}${cacheArgument});
console.log(loaded === undefined ? "no bundle" : loaded.where + ", require " + (await loaded.load()));`;
  }

  /** Runs a Node process that loads the bundle through the cache; what it printed. */
  function loadInChild(file = bundle, cacheFile?: string): string {
    const script = loadingScript(file, cacheFile);
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

  it("leaves one whole cache when several processes start at once with none", async () => {
    // Each writes its own temporary file and renames it: the last rename wins, whole.
    const children = Array.from({ length: 4 }, () => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", loadingScript(bundle)], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let stdout = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      return once(child, "exit").then(([code]) => ({ code: code as number | null, stdout: stdout.trim() }));
    });
    for (const finished of await Promise.all(children)) {
      expect(finished).toEqual({ code: 0, stdout: `bundle.cjs in ${path.basename(folder)}, require beside` });
    }
    expect(readdirSync(folder).sort()).toEqual(["beside.cjs", "bundle.cjs", "bundle.cjs.cache"]);
    // V8 takes it: the next process does not write it again.
    const cache = readFileSync(`${bundle}.cache`);
    expect(loadInChild()).toBe(`bundle.cjs in ${path.basename(folder)}, require beside`);
    expect(readFileSync(`${bundle}.cache`).equals(cache)).toBe(true);
  });

  it("runs the bundle with no cache where it cannot write one", () => {
    // A read-only installation refuses the write; so does a folder that is a file, even to root.
    writeFileSync(path.join(folder, "read-only"), "");
    const cacheFile = path.join(folder, "read-only", "bundle.cjs.cache");
    expect(loadInChild(bundle, cacheFile)).toBe(`bundle.cjs in ${path.basename(folder)}, require beside`);
    expect(loadInChild(bundle, cacheFile)).toBe(`bundle.cjs in ${path.basename(folder)}, require beside`);
    expect(readdirSync(folder).sort()).toEqual(["beside.cjs", "bundle.cjs", "read-only"]);
  });

  it("leaves aside a cache older than its bundle, even of the same length", () => {
    loadInChild();
    // V8 checks only the source's length: the same length, other code, a newer file.
    const source = readFileSync(bundle, "utf8");
    writeFileSync(bundle, source.replace("' in '", "' at '"));
    const later = new Date(Date.now() + 60_000);
    utimesSync(bundle, later, later);
    expect(loadInChild()).toBe(`bundle.cjs at ${path.basename(folder)}, require beside`);
  });
});
