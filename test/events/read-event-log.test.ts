import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readEventLog } from "../../src/events/read-event-log.js";
import type { BytesRead } from "../../src/events/log-lines.js";

let directory: string | undefined;
afterEach(() => {
  if (directory) rmSync(directory, { recursive: true, force: true });
  directory = undefined;
});

function eventLine(id: number, text = "ok"): string {
  return JSON.stringify({
    id,
    agent: "writer",
    run: `r_${Math.floor(id / 50)}`,
    type: "thought",
    time: "2026-01-01T00:00:00.000Z",
    data: { text },
  });
}

function writeLog(lines: string[]): string {
  directory = mkdtempSync(path.join(tmpdir(), "agentd-read-log-"));
  const file = path.join(directory, "writer.jsonl");
  writeFileSync(file, lines.join(""));
  return file;
}

describe("readEventLog", () => {
  it("reads a page near the end of a 200,000-line log without reading the file", async () => {
    const total = 200_000;
    const lines: string[] = [];
    for (let id = 1; id <= total; id++) lines.push(`${eventLine(id)}\n`);
    const file = writeLog(lines);
    const size = statSync(file).size;
    expect(size).toBeGreaterThan(20_000_000);

    for (const after of [total - 1_500, total - 10, 123_456, 7]) {
      const counter: BytesRead = { bytes: 0 };
      const page = await readEventLog(file, after, 1_000, counter);
      const expected = Math.min(1_000, total - after);
      expect(page.map(({ event }) => event.id)).toEqual(
        Array.from({ length: expected }, (_, index) => after + 1 + index),
      );
      // The page itself (~130 bytes a line) plus a few small probes: far below the file's size.
      expect(counter.bytes).toBeLessThan(400_000);
    }
    const counter: BytesRead = { bytes: 0 };
    expect(await readEventLog(file, total, 1_000, counter)).toEqual([]);
    expect(counter.bytes).toBeLessThan(100_000);
  });

  it("finds the same events as a scan from the start, whatever damage lies in between", async () => {
    const lines: string[] = [];
    const ids: number[] = [];
    for (let id = 1; id <= 3_000; id++) {
      if (id % 97 === 0) continue; // a gap: an event whose write failed
      if (id % 89 === 0) lines.push('{"id":999999,"agent":"wri\n'); // torn, then a whole line
      if (id % 211 === 0) lines.push("\n\n"); // empty lines
      if (id % 307 === 0) lines.push("not json at all\n");
      // Long lines, several times a read chunk.
      lines.push(`${eventLine(id, id % 53 === 0 ? "x".repeat(150_000) : "ok")}\n`);
      // A line glued onto the end of a torn one is read apart from it (salvageLine).
      ids.push(id);
      if (id % 401 === 0) lines.push(eventLine(100_000 + id).slice(0, 40));
    }
    lines.push(eventLine(4_000).slice(0, 30)); // a torn last line
    const file = writeLog(lines);

    for (const after of [0, 1, 88, 89, 96, 97, 400, 401, 402, 500, 802, 1_234, 2_900, 2_999, 3_000, 5_000]) {
      for (const limit of [1, 7, 1_000]) {
        const page = await readEventLog(file, after, limit);
        expect(page.map(({ event }) => event.id)).toEqual(ids.filter((id) => id > after).slice(0, limit));
      }
    }
    const whole = await readEventLog(file, 1_500);
    expect(whole.map(({ event }) => event.id)).toEqual(ids.filter((id) => id > 1_500));
    const long = await readEventLog(file, 52, 1);
    expect(long[0]?.line).toBe(eventLine(53, "x".repeat(150_000)));
  });

  it("reads a missing file as an empty log", async () => {
    directory = mkdtempSync(path.join(tmpdir(), "agentd-read-log-"));
    expect(await readEventLog(path.join(directory, "none.jsonl"), 5)).toEqual([]);
  });
});
