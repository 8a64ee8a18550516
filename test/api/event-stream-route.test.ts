import { afterEach, describe, expect, it } from "vitest";
import type { EventDraft } from "../../src/events/agent-event.js";
import { type ApiFixture, startApiFixture } from "./api-fixture.js";
import { waitFor } from "../support/wait-for.js";

interface StreamedEvent {
  id: number;
  text: string;
}

function thought(agent: string, text: string): EventDraft {
  return { agent, run: "r_1", type: "thought", data: { text } };
}

/** Reads Server-Sent Events from a response until `count` events or `comment` arrive. */
async function readStream(
  response: Response,
  until: { count?: number; comment?: string },
): Promise<{ events: StreamedEvent[]; comments: string[] }> {
  const reader = (response.body as ReadableStream<Uint8Array>)
    .pipeThrough(new TextDecoderStream())
    .getReader();
  const events: StreamedEvent[] = [];
  const comments: string[] = [];
  let buffer = "";
  const done = () =>
    (until.count !== undefined && events.length >= until.count) ||
    (until.comment !== undefined && comments.includes(until.comment));
  while (!done()) {
    const chunk = await reader.read();
    if (chunk.done) break;
    buffer += chunk.value;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields = new Map<string, string>();
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) comments.push(line.slice(1).trim());
        else {
          const colon = line.indexOf(":");
          fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
        }
      }
      const data = fields.get("data");
      if (data !== undefined) {
        const event = JSON.parse(data) as { id: number; data: { text: string } };
        expect(Number(fields.get("id"))).toBe(event.id);
        events.push({ id: event.id, text: event.data.text });
      }
    }
  }
  await reader.cancel();
  return { events, comments };
}

describe("GET /agents/:id/events/stream", () => {
  let fixture: ApiFixture;
  afterEach(() => fixture.close());

  it("streams new events of the agent live, starting after the last one", async () => {
    fixture = await startApiFixture();
    fixture.bus.publish(thought("writer", "before connecting"));
    const response = await fixture.request("/agents/writer/events/stream", {
      signal: AbortSignal.timeout(15_000),
    });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const reading = readStream(response, { count: 2 });
    fixture.bus.publish(thought("writer", "live one"));
    fixture.bus.publish(thought("other", "not for this stream"));
    fixture.bus.publish(thought("writer", "live two"));
    expect((await reading).events).toEqual([
      { id: 2, text: "live one" },
      { id: 3, text: "live two" },
    ]);
  });

  it("resumes after Last-Event-ID, from memory and from disk when the ring buffer moved on", async () => {
    fixture = await startApiFixture({ bufferSize: 3 });
    for (let index = 1; index <= 6; index++) fixture.bus.publish(thought("writer", `event ${index}`));
    const response = await fixture.request("/agents/writer/events/stream", {
      headers: { "last-event-id": "1" },
      signal: AbortSignal.timeout(15_000),
    });
    const reading = readStream(response, { count: 6 });
    fixture.bus.publish(thought("writer", "event 7"));
    const { events } = await reading;
    expect(events.map((event) => event.id)).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it("answers resumes from one id with the same bytes, and with the events that came since", async () => {
    fixture = await startApiFixture();
    for (let index = 1; index <= 3; index++) fixture.bus.publish(thought("writer", `event ${index}`));
    /** The stream's text from Last-Event-ID 1 up to the end of event `last`. */
    const resume = async (last: number): Promise<string> => {
      const response = await fixture.request("/agents/writer/events/stream", {
        headers: { "last-event-id": "1" },
        signal: AbortSignal.timeout(15_000),
      });
      const reader = (response.body as ReadableStream<Uint8Array>)
        .pipeThrough(new TextDecoderStream())
        .getReader();
      let text = "";
      while (!text.includes(`id: ${last}\n`) || !text.endsWith("\n\n")) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += chunk.value;
      }
      await reader.cancel();
      return text;
    };
    const frame = (id: number) =>
      `id: ${id}\ndata: ${fixture.store.pollLines("writer", { after: id - 1, limit: 1 }).lines[0]}\n\n`;
    const first = await resume(3);
    expect(first).toBe(`: agentd event stream\nretry: 2000\n\n${frame(2)}${frame(3)}`);
    expect(await resume(3)).toBe(first);
    fixture.bus.publish(thought("writer", "event 4"));
    expect(await resume(4)).toBe(`${first}${frame(4)}`);
  });

  it("replays a backlog of many pages and goes live without a gap or a repeat", async () => {
    fixture = await startApiFixture({ bufferSize: 50 });
    const backlog = 3_000;
    for (let index = 1; index <= backlog; index++) fixture.bus.publish(thought("writer", `event ${index}`));
    const response = await fixture.request("/agents/writer/events/stream", {
      headers: { "last-event-id": "1" },
      signal: AbortSignal.timeout(30_000),
    });
    const total = backlog + 1_000;
    const reading = readStream(response, { count: total - 1 });
    // Published while the backlog is replayed: from disk, then the ring, then live.
    for (let index = backlog + 1; index <= total; index++) {
      fixture.bus.publish(thought("writer", `event ${index}`));
      if (index % 100 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const { events } = await reading;
    expect(events.map((event) => event.id)).toEqual(
      Array.from({ length: total - 1 }, (_, index) => index + 2),
    );
  });

  it("keeps a live client that stops reading, and catches it up from the store once it reads", async () => {
    fixture = await startApiFixture({ bufferSize: 10 });
    const response = await fixture.request("/agents/writer/events/stream", {
      signal: AbortSignal.timeout(30_000),
    });
    const first = (response.body as ReadableStream<Uint8Array>).getReader();
    await first.read(); // the opening comment; nothing more is read for now
    first.releaseLock();
    // 20 MB while the client reads nothing: more than the socket, the client and the high-water
    // mark hold. The old stream cut such a client at 8 MB.
    const large = "x".repeat(100_000);
    for (let index = 0; index < 200; index++) {
      fixture.bus.publish(thought("writer", large));
      if (index % 10 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    fixture.bus.publish(thought("writer", "last"));
    const { events } = await readStream(response, { count: 201 });
    expect(events.map((event) => event.id)).toEqual(Array.from({ length: 201 }, (_, index) => index + 1));
    expect(events.at(-1)?.text).toBe("last");
  });

  it("sends heartbeat comments on an idle stream", async () => {
    fixture = await startApiFixture({ heartbeatMilliseconds: 50 });
    const response = await fixture.request("/agents/writer/events/stream", {
      signal: AbortSignal.timeout(15_000),
    });
    const { comments } = await readStream(response, { comment: "heartbeat" });
    expect(comments).toContain("heartbeat");
  });

  it("rejects a Last-Event-ID that is not a number, and unknown agents", async () => {
    fixture = await startApiFixture();
    const bad = await fixture.request("/agents/writer/events/stream", { headers: { "last-event-id": "x" } });
    expect(bad.status).toBe(400);
    expect((await fixture.request("/agents/nobody/events/stream")).status).toBe(404);
  });

  it("ends open streams when the server closes", async () => {
    fixture = await startApiFixture();
    const response = await fixture.request("/agents/writer/events/stream", {
      signal: AbortSignal.timeout(15_000),
    });
    const reading = readStream(response, { count: 1 });
    await waitFor(() => fixture.bus.lastId("writer") === 0, "fixture.bus.lastId('writer') === 0");
    await fixture.server.close();
    expect((await reading).events).toEqual([]);
  });
});
