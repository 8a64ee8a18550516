import { writeFileSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { DaemonProcess } from "../support/daemon-process.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();
const HEAP_LIMIT_MB = 64;

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

async function replayFromFarBack(count: number): Promise<{ ids: number[]; peak: number }> {
  const project = kit.project();
  project.writeAgent("flood", { description: "many events" });
  writeHistory(project.dataDirectory, count, 1_000);
  // A heap far smaller than the history (~55 MB of lines, several times that parsed): a replay
  // that held it whole would die of it.
  const daemon = await kit.daemon(project.configFile, {
    environment: { NODE_OPTIONS: `--max-old-space-size=${HEAP_LIMIT_MB}` },
  });
  const ids = await readIds(daemon, 1, count);
  return { ids, peak: peakResidentBytes(daemon.pid) };
}

describe("an SSE resume from far back", () => {
  it("replays 50,000 events from after=1 in order, once each, in bounded memory", async () => {
    const small = await replayFromFarBack(500);
    expect(small.ids).toEqual(Array.from({ length: 499 }, (_, index) => index + 2));

    const total = 50_000;
    const large = await replayFromFarBack(total);
    expect(large.ids.length).toBe(total - 1);
    expect(large.ids.every((id, index) => id === index + 2)).toBe(true);
    // Loosely: ~55 MB of history went through; the peak grew by less than that (measured: ~30 MB,
    // garbage of the pages the heap had not collected yet).
    const growth = large.peak - small.peak;
    expect(growth, `peak RSS ${small.peak >> 20} MB → ${large.peak >> 20} MB`).toBeLessThan(48 * 1024 * 1024);
  }, 300_000);
});
