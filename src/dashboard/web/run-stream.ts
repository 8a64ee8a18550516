// A run's events: its persisted log a page at a time, and the agent's live stream (Server-Sent
// Events) filtered to the run. The stream is opened first and the first page read once it is open;
// later pages come on request (`loadMore`), so a run of a million events is never read whole. Until
// the last page is in, the live events sit after a gap that the next pages fill; the timeline lays
// out by id and drops repeats. A reconnect resumes after the last id (Last-Event-ID).

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
  /** Where the pages of the log stand: called after each page and while one loads. */
  onHistory: (history: HistoryState) => void;
}

/** The pages of a run's log read so far. */
export interface HistoryState {
  /** Every event with an id up to this one is in (0: nothing yet). */
  through: number;
  /** Whether the log has events after `through` not read yet. */
  more: boolean;
  loading: boolean;
}

/** A run being followed: `loadMore` reads the log's next page, `stop` ends everything. */
export interface FollowedRun {
  loadMore(): void;
  stop(): void;
}

const RECONNECT_MILLISECONDS = 2_000;

/** Events a page of the run's log holds. */
export const HISTORY_PAGE = 500;

/** Starts reading: the first page of the log, and the live stream while the run is in flight. */
export function followRun(options: RunStreamOptions): FollowedRun {
  let stopped = false;
  let source: EventSource | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const history: HistoryState = { through: 0, more: true, loading: false };
  let firstPageAsked = false;
  const controller = new AbortController();

  const loadPage = async () => {
    if (stopped || history.loading || !history.more) return;
    history.loading = true;
    options.onHistory({ ...history });
    try {
      const page = await getJson<{ events: AgentEvent[]; next: number }>(
        `/runs/${encodeURIComponent(options.run)}/events?after=${history.through}&limit=${HISTORY_PAGE}`,
        controller.signal,
      );
      if (stopped) return;
      options.onEvents(page.events);
      history.through = page.next;
      history.more = page.events.length >= HISTORY_PAGE;
    } catch (error) {
      if (!stopped) options.onError(error);
    } finally {
      history.loading = false;
      if (!stopped) options.onHistory({ ...history });
    }
  };
  const loadFirstPage = () => {
    if (firstPageAsked) return;
    firstPageAsked = true;
    void loadPage();
  };

  const connect = () => {
    const after = options.lastId();
    const query = after > 0 ? `?after=${after}` : "";
    source = new EventSource(`/agents/${encodeURIComponent(options.agent)}/events/stream${query}`);
    source.addEventListener("open", () => {
      options.onState("live");
      loadFirstPage();
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
    loadFirstPage();
  }
  return {
    loadMore: () => void loadPage(),
    stop: () => {
      stopped = true;
      controller.abort();
      clearTimeout(retry);
      source?.close();
      options.onState("closed");
    },
  };
}
