import { afterEach, describe, expect, it } from "vitest";
import type { EventDraft } from "../../src/events/agent-event.js";
import { type ApiFixture, startApiFixture } from "./api-fixture.js";
import { ManualClock } from "../support/manual-clock.js";
import { waitFor } from "../support/wait-for.js";

interface Page {
  events: Array<{ id: number; agent: string; data: { text?: string } }>;
  next: number;
  oldest: number | null;
  missed: number;
}

interface MergedPage {
  events: Array<{ id: number; agent: string }>;
  next: string;
  missed: number;
}

function thought(agent: string, text: string): EventDraft {
  return { agent, run: "r_1", type: "thought", data: { text } };
}

describe("event routes", () => {
  let fixture: ApiFixture;
  afterEach(() => fixture.close());

  const poll = async (pathAndQuery: string) => (await (await fixture.request(pathAndQuery)).json()) as Page;

  it("follows an agent by cursor across a ring-buffer overflow", async () => {
    fixture = await startApiFixture({ bufferSize: 4 });
    for (let index = 1; index <= 3; index++) fixture.bus.publish(thought("writer", `event ${index}`));
    const first = await poll("/agents/writer/events?after=0&limit=2");
    expect(first).toMatchObject({ next: 2, oldest: 1, missed: 0 });
    expect(first.events.map((event) => event.id)).toEqual([1, 2]);

    for (let index = 4; index <= 10; index++) fixture.bus.publish(thought("writer", `event ${index}`));
    const behind = await poll(`/agents/writer/events?after=${first.next}`);
    expect(behind).toMatchObject({ next: 10, oldest: 7, missed: 4 });
    expect(behind.events.map((event) => event.id)).toEqual([7, 8, 9, 10]);
    expect(await poll(`/agents/writer/events?after=${behind.next}`)).toEqual({
      events: [],
      next: 10,
      oldest: 7,
      missed: 0,
    });
  });

  it("reports an agent without events with oldest null, and an unknown agent as 404", async () => {
    fixture = await startApiFixture();
    expect(await poll("/agents/writer/events")).toEqual({ events: [], next: 0, oldest: null, missed: 0 });
    expect((await fixture.request("/agents/nobody/events")).status).toBe(404);
  });

  it("releases a long poll as soon as an event arrives", async () => {
    // On a clock that does not move, only the event can end the wait.
    fixture = await startApiFixture({ clock: new ManualClock(0) });
    const waiting = poll("/agents/writer/events?after=0&wait=30");
    await waitFor(() => fixture.store.waiting === 1, "fixture.store.waiting === 1");
    fixture.bus.publish(thought("writer", "here it is"));
    const page = await waiting;
    expect(page.events.map((event) => event.data.text)).toEqual(["here it is"]);
  });

  it("answers a long poll at once when events are already there, and empty when the wait ends", async () => {
    const clock = new ManualClock(0);
    fixture = await startApiFixture({ clock });
    fixture.bus.publish(thought("writer", "already here"));
    expect((await poll("/agents/writer/events?after=0&wait=30")).events).toHaveLength(1);
    const waiting = poll("/agents/writer/events?after=1&wait=30");
    await waitFor(() => fixture.store.waiting === 1, "fixture.store.waiting === 1");
    clock.advanceBy(30_000);
    expect(await waiting).toMatchObject({ events: [], next: 1 });
  });

  it("drops a long poll when the client goes away", async () => {
    fixture = await startApiFixture();
    const controller = new AbortController();
    const waiting = fixture.request("/agents/writer/events?wait=60", { signal: controller.signal });
    await waitFor(() => fixture.store.waiting === 1, "fixture.store.waiting === 1");
    controller.abort();
    await expect(waiting).rejects.toThrow();
    await waitFor(() => fixture.store.waiting === 0, "fixture.store.waiting === 0");
  });

  it("releases long polls when the server closes", async () => {
    fixture = await startApiFixture();
    const waiting = fixture.request("/agents/writer/events?wait=60").then((response) => response.status);
    await waitFor(() => fixture.store.waiting === 1, "fixture.store.waiting === 1");
    const closing = fixture.server.close();
    expect(await waiting).toBe(200);
    await closing;
  });

  it("merges every agent with an opaque cursor and long-polls it", async () => {
    fixture = await startApiFixture({ agents: [] });
    fixture.bus.publish(thought("alpha", "a1"));
    fixture.bus.publish(thought("beta", "b1"));
    fixture.bus.publish(thought("alpha", "a2"));
    const merged = async (query: string) =>
      (await (await fixture.request(`/events${query}`)).json()) as MergedPage;
    const first = await merged("?limit=2");
    expect(first.events.map((event) => `${event.agent}:${event.id}`)).toEqual(["alpha:1", "beta:1"]);
    const second = await merged(`?after=${first.next}`);
    expect(second.events.map((event) => `${event.agent}:${event.id}`)).toEqual(["alpha:2"]);

    const waiting = merged(`?after=${second.next}&wait=30`);
    await waitFor(() => fixture.store.waiting === 1, "fixture.store.waiting === 1");
    fixture.bus.publish(thought("gamma", "g1"));
    expect((await waiting).events.map((event) => `${event.agent}:${event.id}`)).toEqual(["gamma:1"]);
  });
});
