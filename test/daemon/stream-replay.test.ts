import { writeFileSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { DaemonProcess } from "../support/daemon-process.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();
/**
 * The daemon's heap limit: above what an idle daemon holds (~30 MB after its start) by less than
 * the history (~61 MB of lines, several times that parsed), so a replay that held it whole would
 * die of it (a replay page of 200,000 events does). At 64 MB the daemon's own baseline left so
 * little room that V8 collected garbage almost without pause: the replay cost 34 CPU-s where it
 * costs 1.5 s at 96 MB, for the same claim.
 */
const HEAP_LIMIT_MB = 96;

/** Writes `count` events of agent `flood` as its log, each about `bytes` long, as the daemon would. */
function writeHistory(dataDirectory: string, count: number, bytes: number): void {
  const folder = path.join(dataDirectory, "events");
  mkdirSync(folder, { recursive: true });
  const padding = "x".repeat(bytes);
  const lines: string[] = [];
  for (let id = 1; id <= count; id++) {
    lines.push(
      `${JSON.stringify({
        id,
        agent: "flood",
        // Of no run: events of runs without records are runs the daemon rebuilds at start and
        // ends as crashed, which would add status events after these.
        run: null,
        type: "thought",
        time: "2026-01-01T00:00:00.000Z",
        data: { text: padding },
      })}\n`,
    );
  }
  writeFileSync(path.join(folder, "flood.jsonl"), lines.join(""));
}

/** Peak resident memory of a process so far, in bytes (Linux VmHWM). */
function peakResidentBytes(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1] ?? 0) * 1_024;
}

/** Reads the stream from `after` until event `last`; returns every id received, in order. */
async function readIds(daemon: DaemonProcess, after: number, last: number): Promise<number[]> {
  const response = await fetch(`${daemon.url}/agents/flood/events/stream`, {
    headers: { ...daemon.headers(), "last-event-id": String(after) },
    signal: AbortSignal.timeout(240_000),
  });
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>)
    .pipeThrough(new TextDecoderStream())
    .getReader();
  const ids: number[] = [];
  let buffer = "";
  while (ids.at(-1) !== last) {
    const chunk = await reader.read();
    if (chunk.done) break;
    buffer += chunk.value;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const idLine = block.split("\n").find((line) => line.startsWith("id: "));
      if (idLine !== undefined) ids.push(Number(idLine.slice(4)));
    }
  }
  await reader.cancel();
  return ids;
}

describe("an SSE resume from far back", () => {
  it("replays 100,000 events from after=1 in order, once each, in bounded memory", async () => {
    const total = 100_000;
    const project = kit.project();
    project.writeAgent("flood", { description: "many events" });
    // ~61 MB of lines, written as the daemon would before it starts (no runs to go through).
    writeHistory(project.dataDirectory, total, 500);
    // A heap far smaller than the history (several times that parsed): a replay that held it
    // whole would die of it.
    const daemon = await kit.daemon(project.configFile, {
      environment: { NODE_OPTIONS: `--max-old-space-size=${HEAP_LIMIT_MB}` },
    });
    // A short resume first: the replay's code paths warm, the peak before the long one.
    const recent = await readIds(daemon, total - 500, total);
    expect(recent).toEqual(Array.from({ length: 500 }, (_, index) => total - 499 + index));
    const before = peakResidentBytes(daemon.pid);

    const ids = await readIds(daemon, 1, total);
    expect(ids.length).toBe(total - 1);
    expect(ids.every((id, index) => id === index + 2)).toBe(true);
    // Loosely: ~61 MB of history went through; the peak grew by less than that (garbage of the
    // pages the heap had not collected yet).
    const after = peakResidentBytes(daemon.pid);
    expect(after - before, `peak RSS ${before >> 20} MB → ${after >> 20} MB`).toBeLessThan(48 * 1024 * 1024);
  }, 300_000);
});
