import type { EventDataByType } from "../../events/agent-event.js";
import type { RunContext } from "../worker.js";

/** Publishes one run's events with its agent and run ids filled in. */
export class RunEvents {
  readonly #context: RunContext;

  constructor(context: RunContext) {
    this.#context = context;
  }

  publish<Type extends keyof EventDataByType>(type: Type, data: EventDataByType[Type]): void {
    this.#context.events.publish({
      agent: this.#context.definition.id,
      run: this.#context.runId,
      type,
      data,
    } as Parameters<RunContext["events"]["publish"]>[0]);
  }
}
