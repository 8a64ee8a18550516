import type { AgentEvent } from "../../src/events/agent-event.js";
import type { EventBus } from "../../src/events/event-bus.js";

/** Records every event of a bus and lets a test wait for one that matches, with a deadline. */
export class EventLog {
  readonly events: AgentEvent[] = [];
  readonly #waiters = new Set<() => void>();

  constructor(bus: EventBus) {
    bus.subscribe((event) => {
      this.events.push(event);
      for (const waiter of [...this.#waiters]) waiter();
    });
  }

  /** Status changes of one run, in order. */
  statuses(runId: string): string[] {
    return this.events.flatMap((event) =>
      event.type === "status" && event.run === runId ? [event.data.status] : [],
    );
  }

  waitFor(predicate: (event: AgentEvent) => boolean, timeoutMilliseconds = 10_000): Promise<AgentEvent> {
    const found = this.events.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error("no matching event before the deadline"));
      }, timeoutMilliseconds);
      const check = () => {
        const match = this.events.find(predicate);
        if (!match) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(match);
      };
      this.#waiters.add(check);
    });
  }

  /** Waits for the run's `status` event with this status. */
  waitForStatus(runId: string, status: string, timeoutMilliseconds?: number): Promise<AgentEvent> {
    return this.waitFor(
      (event) => event.type === "status" && event.run === runId && event.data.status === status,
      timeoutMilliseconds,
    );
  }
}
