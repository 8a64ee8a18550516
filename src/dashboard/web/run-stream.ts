// A run's events: its persisted log, then the agent's live stream (Server-Sent Events) filtered to
// the run. The stream is opened first and the log read once it is open, so nothing falls between
// the two; a reconnect resumes after the last id (Last-Event-ID) and the timeline drops repeats.

import { getJson } from "./api-client.js";
import type { AgentEvent } from "./api-types.js";

export type StreamState = "connecting" | "live" | "reconnecting" | "closed";

export interface RunStreamOptions {
  agent: string;
  run: string;
  /** Whether to follow live (false for a finished run: the log is all there is). */
  live: boolean;
  /** The highest event id already received, for a reconnect. */
  lastId: () => number;
  onEvents: (events: AgentEvent[]) => void;
  onState: (state: StreamState) => void;
  onError: (error: unknown) => void;
}

const RECONNECT_MILLISECONDS = 2_000;

/** Starts reading; returns the function that stops. */
/** Events a page of the run's history holds. */
const HISTORY_PAGE = 2_000;

export function followRun(options: RunStreamOptions): () => void {
  let stopped = false;
  let source: EventSource | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let historyLoaded = false;
  const controller = new AbortController();

  const loadHistory = async () => {
    if (historyLoaded) return;
    historyLoaded = true;
    try {
      // A page at a time: a long run's log is never one answer (nor one render).
      for (let after = 0; !stopped;) {
        const page = await getJson<{ events: AgentEvent[]; next: number }>(
          `/runs/${encodeURIComponent(options.run)}/events?after=${after}&limit=${HISTORY_PAGE}`,
          controller.signal,
        );
        if (!stopped) options.onEvents(page.events);
        if (page.events.length < HISTORY_PAGE) break;
        after = page.next;
      }
    } catch (error) {
      historyLoaded = false;
      if (!stopped) options.onError(error);
    }
  };

  const connect = () => {
    const after = options.lastId();
    const query = after > 0 ? `?after=${after}` : "";
    source = new EventSource(`/agents/${encodeURIComponent(options.agent)}/events/stream${query}`);
    source.addEventListener("open", () => {
      options.onState("live");
      void loadHistory();
    });
    source.addEventListener("message", (message: MessageEvent<string>) => {
      const event = JSON.parse(message.data) as AgentEvent;
      if (event.run === options.run) options.onEvents([event]);
    });
    source.addEventListener("error", () => {
      if (stopped) return;
      options.onState("reconnecting");
      // CONNECTING: the browser retries by itself, sending Last-Event-ID. CLOSED (an HTTP error,
      // a restart): open a new stream after the last id received.
      if (source?.readyState === EventSource.CLOSED) {
        source.close();
        retry = setTimeout(connect, RECONNECT_MILLISECONDS);
      }
    });
  };

  if (options.live) {
    options.onState("connecting");
    connect();
  } else {
    options.onState("closed");
    void loadHistory();
  }
  return () => {
    stopped = true;
    controller.abort();
    clearTimeout(retry);
    source?.close();
    options.onState("closed");
  };
}
