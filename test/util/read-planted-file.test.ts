import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readPlantedFileSync } from "../../src/util/read-planted-file.js";

const root = mkdtempSync(path.join(tmpdir(), "agentd-planted-file-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("reading a file a sandboxed process may have made", () => {
  it("reads a regular file, also through a link", () => {
    const file = path.join(root, "config.toml");
    writeFileSync(file, "model = 'x'\n");
    symlinkSync(file, path.join(root, "linked.toml"));
    expect(readPlantedFileSync(file, 1024)).toBe("model = 'x'\n");
    expect(readPlantedFileSync(path.join(root, "linked.toml"), 1024)).toBe("model = 'x'\n");
  });

  it("skips a FIFO at once, a device, a folder, a missing file and one over the size", () => {
    const fifo = path.join(root, "fifo");
    execFileSync("mkfifo", [fifo]);
    symlinkSync("/dev/zero", path.join(root, "zero"));
    const sparse = path.join(root, "sparse");
    writeFileSync(sparse, "");
    truncateSync(sparse, 8 * 1024 * 1024 * 1024);
    for (const file of [fifo, path.join(root, "zero"), root, path.join(root, "missing"), sparse]) {
      expect(readPlantedFileSync(file, 256 * 1024), file).toBeUndefined();
    }
  });

  it("skips a socket, and a file that holds more than its size said (one that grew, /proc's)", async () => {
    const socket = path.join(root, "socket");
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      expect(readPlantedFileSync(socket, 256 * 1024)).toBeUndefined();
    } finally {
      server.close();
    }
    // Its size is 0, its text is not.
    expect(readPlantedFileSync("/proc/self/status", 256 * 1024)).toBeUndefined();
    const empty = path.join(root, "empty");
    writeFileSync(empty, "");
    expect(readPlantedFileSync(empty, 256 * 1024)).toBe("");
  });
});
