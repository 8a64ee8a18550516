import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import type { EventFeed, EventListener } from "../../src/events/event-bus.js";
import { EventStreamHub, type HubStream } from "../../src/api/event-stream-hub.js";

/** A bus that counts its subscriptions. */
function countingBus(): EventFeed & { subscribed: number; listeners: Set<EventListener> } {
  const listeners = new Set<EventListener>();
  return {
    subscribed: 0,
    listeners,
    subscribe(listener) {
      this.subscribed++;
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    seed: () => undefined,
  };
}

function stream(agent: string): HubStream & { heartbeats: number; offered: AgentEvent[] } {
  return {
    agent,
    principal: undefined,
    heartbeats: 0,
    offered: [],
    offer(event) {
      this.offered.push(event);
    },
    heartbeat() {
      this.heartbeats++;
    },
    end: () => undefined,
  };
}

const INTERVAL = 1_000;

describe("EventStreamHub", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("keeps one subscription while streams open and close one after another", () => {
    const bus = countingBus();
    const hub = new EventStreamHub(bus, INTERVAL);
    for (let index = 0; index < 5; index++) {
      const replay = stream(`agent-${index}`);
      hub.remove(hub.add(replay));
    }
    expect(bus.subscribed).toBe(1);
    expect(hub.size).toBe(0);
    expect(hub.running).toBe(true);
  });

  it("stops at the first heartbeat that finds no stream, and starts again with the next one", () => {
    const bus = countingBus();
    const hub = new EventStreamHub(bus, INTERVAL);
    const first = stream("writer");
    hub.remove(hub.add(first));
    vi.advanceTimersByTime(INTERVAL);
    expect(hub.running).toBe(false);
    expect(bus.listeners.size).toBe(0);
    expect(first.heartbeats).toBe(0);

    const second = stream("writer");
    hub.add(second);
    expect(bus.subscribed).toBe(2);
    vi.advanceTimersByTime(INTERVAL);
    expect(second.heartbeats).toBe(1);
    const event = { id: 1, agent: "writer" } as AgentEvent;
    for (const listener of bus.listeners) listener(event);
    expect(second.offered).toEqual([event]);
  });

  it("stops at once when every stream is ended", () => {
    const bus = countingBus();
    const hub = new EventStreamHub(bus, INTERVAL);
    const open = stream("writer");
    const membership = hub.add(open);
    open.end = () => hub.remove(membership);
    hub.endAll();
    expect(hub.size).toBe(0);
    expect(hub.running).toBe(false);
    expect(bus.listeners.size).toBe(0);
  });

  it("ends the streams picked among an agent's, and goes on delivering to the others", () => {
    const bus = countingBus();
    const hub = new EventStreamHub(bus, INTERVAL);
    const first = stream("writer");
    const second = stream("writer");
    const third = stream("writer");
    const fourth = stream("writer");
    const streams = [first, second, third, fourth];
    for (const open of streams) {
      const membership = hub.add(open);
      open.end = () => hub.remove(membership);
    }
    const picked = new Set<HubStream>([first, third, fourth]);
    hub.endWhere((open) => picked.has(open));
    expect(hub.size).toBe(1);
    const event = { id: 1, agent: "writer" } as AgentEvent;
    for (const listener of bus.listeners) listener(event);
    expect(streams.map((open) => open.offered.length)).toEqual([0, 1, 0, 0]);
    vi.advanceTimersByTime(INTERVAL);
    expect(streams.map((open) => open.heartbeats)).toEqual([0, 1, 0, 0]);
  });
});
