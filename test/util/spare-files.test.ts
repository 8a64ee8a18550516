import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replaceFileSync } from "../../src/util/replace-file.js";
import { SpareFiles } from "../../src/util/spare-files.js";
import { waitFor } from "../support/wait-for.js";

let directory: string;
let spareDirectory: string;
beforeEach(() => {
  directory = mkdtempSync(path.join(tmpdir(), "agentd-spares-"));
  spareDirectory = path.join(directory, "spare");
});
afterEach(() => rmSync(directory, { recursive: true, force: true }));

/** Takes spares until one is ready (the first take only starts making them). */
function readySpare(spares: SpareFiles): Promise<string> {
  return waitFor(() => spares.take(), "a spare file");
}

describe("spare files", () => {
  it("makes empty files ahead, off the event loop, and makes more as they are taken", async () => {
    const spares = new SpareFiles(spareDirectory, 4);
    expect(spares.take()).toBeUndefined();
    const spare = await readySpare(spares);
    expect(readFileSync(spare, "utf8")).toBe("");
    expect(path.dirname(spare)).toBe(spareDirectory);
    await waitFor(() => spares.ready === 4, "four spares ready again");
    // The one taken and the four ready: nothing else is made.
    expect(readdirSync(spareDirectory)).toHaveLength(5);
    await spares.close();
  });

  it("takes the spares a previous process left, whatever they hold", async () => {
    mkdirSync(spareDirectory);
    writeFileSync(path.join(spareDirectory, "left-by-a-crash"), "half a record");
    const spares = new SpareFiles(spareDirectory, 1);
    expect(await readySpare(spares)).toBe(path.join(spareDirectory, "left-by-a-crash"));
    await spares.close();
  });

  it("makes none after close, which waits for those under way", async () => {
    const spares = new SpareFiles(spareDirectory, 8);
    spares.take();
    await spares.close();
    const made = existsSync(spareDirectory) ? readdirSync(spareDirectory).length : 0;
    expect(spares.take()).toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect(existsSync(spareDirectory) ? readdirSync(spareDirectory).length : 0).toBe(made);
  });
});

describe("atomic writes with spares", () => {
  it("writes the content through a spare, which is renamed over the target", async () => {
    const spares = new SpareFiles(spareDirectory, 2);
    const target = path.join(directory, "runs", "r_1.json");
    replaceFileSync(target, "first\n", { sync: false, spares });
    await waitFor(() => spares.ready === 2, "two spares ready");
    replaceFileSync(target, "second\n", { sync: false, spares });
    expect(readFileSync(target, "utf8")).toBe("second\n");
    // The spare became the target: one is left until the refill lands.
    expect(spares.ready).toBe(1);
    // Nothing is left beside the target.
    expect(readdirSync(path.dirname(target))).toEqual(["r_1.json"]);
    await spares.close();
  });

  it("truncates a spare that holds old content before writing", async () => {
    mkdirSync(spareDirectory);
    writeFileSync(path.join(spareDirectory, "left-by-a-crash"), "x".repeat(1000));
    const spares = new SpareFiles(spareDirectory, 1);
    spares.take();
    await waitFor(() => spares.ready === 1, "the leftover adopted");
    const target = path.join(directory, "state.json");
    replaceFileSync(target, "short\n", { sync: false, spares });
    expect(readFileSync(target, "utf8")).toBe("short\n");
    await spares.close();
  });
});
