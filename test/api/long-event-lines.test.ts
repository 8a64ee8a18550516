import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EventDraft } from "../../src/events/agent-event.js";
import { type ApiFixture, startApiFixture } from "./api-fixture.js";

/** 80 Ki characters per event, past the 64 Ki the ring keeps: 200 fill two 8 MB segments. */
const TEXT_CHARS = 80 * 1024;
const EVENTS = 200;

function hugeThought(index: number): EventDraft {
  return {
    agent: "writer",
    run: "r_1",
    type: "thought",
    data: { text: `${index}:`.padEnd(TEXT_CHARS, "x") },
  };
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The digest of every line of the agent's log on disk, by id: closed segments and current file. */
function linesOnDisk(dataDirectory: string, agent: string): Map<number, string> {
  const events = path.join(dataDirectory, "events");
  const segments = path.join(events, "segments", agent);
  const files = [
    ...readdirSync(segments)
      .sort()
      .map((name) => path.join(segments, name)),
    // Absent while the last segment just closed.
    ...[path.join(events, `${agent}.jsonl`)].filter((file) => existsSync(file)),
  ];
  const byId = new Map<number, string>();
  for (const file of files) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (line !== "") byId.set(Number(/^\{"id":(\d+)/.exec(line)?.[1]), digest(line));
    }
  }
  return byId;
}

/** The raw JSON text of each event in a page body `{"events":[…],…}`, split at the event starts. */
function eventTexts(body: string): string[] {
  const list = body.slice('{"events":['.length, body.lastIndexOf("],"));
  if (list === "") return [];
  return list.split(',{"id":').map((text, index) => (index === 0 ? text : `{"id":${text}`));
}

describe("events longer than the ring keeps in memory", () => {
  let fixture: ApiFixture;
  afterEach(() => fixture.close());

  it("serves 200 events of 80 Ki characters whole from polls, the merged feed and streams", async () => {
    fixture = await startApiFixture();
    for (let index = 1; index <= EVENTS; index++) fixture.bus.publish(hugeThought(index));
    // 200 × 80 Ki written; the ring holds none of their text (bound: 200 × 64 Ki characters).
    expect(fixture.store.retainedChars()).toBe(0);
    const onDisk = linesOnDisk(fixture.dataDirectory, "writer");
    expect(onDisk.size).toBe(EVENTS);

    // Polls, 20 events a page: each event's text is the line on disk, byte for byte.
    const served = new Map<number, string>();
    for (let after = 0; after < EVENTS; after += 20) {
      const body = await (await fixture.request(`/agents/writer/events?after=${after}&limit=20`)).text();
      expect(body.endsWith(`],"next":${after + 20},"oldest":1,"missed":0}`)).toBe(true);
      for (const text of eventTexts(body)) {
        served.set(Number(/^\{"id":(\d+)/.exec(text)?.[1]), digest(text));
      }
    }
    expect(served).toEqual(onDisk);

    // The merged feed, a page of 10 from the start.
    const merged = await (await fixture.request("/events?limit=10")).text();
    expect(eventTexts(merged).map(digest)).toEqual([...onDisk.values()].slice(0, 10));

    // A stream resumed from id 195: a replay of 5 read from disk, then a new one live.
    const response = await fixture.request("/agents/writer/events/stream", {
      headers: { "last-event-id": "195" },
      signal: AbortSignal.timeout(30_000),
    });
    const reader = (response.body as ReadableStream<Uint8Array>)
      .pipeThrough(new TextDecoderStream())
      .getReader();
    let text = "";
    const frames = () => [...text.matchAll(/id: (\d+)\ndata: (.*)\n\n/g)];
    while (frames().length < 5) text += (await reader.read()).value ?? "";
    fixture.bus.publish(hugeThought(EVENTS + 1));
    while (frames().length < 6) text += (await reader.read()).value ?? "";
    await reader.cancel();
    const streamed = frames().map((match) => [Number(match[1]), digest(match[2] ?? "")]);
    const after = linesOnDisk(fixture.dataDirectory, "writer");
    expect(streamed).toEqual([196, 197, 198, 199, 200, 201].map((id) => [id, after.get(id)]));
  }, 120_000);
});
