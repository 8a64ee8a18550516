import type { ServerResponse } from "node:http";
import type { AgentEvent } from "../events/agent-event.js";
import type { EventStore } from "../events/event-store.js";
import type { ReplayPageCache } from "./replay-page-cache.js";

/** Most events a replay holds in memory at once (one page, from the ring buffer or from disk). */
export const REPLAY_PAGE_EVENTS = 500;
/**
 * Bytes waiting on the socket past which the writer stops and waits for `drain`: a replay pauses,
 * a live stream falls back to replaying from the store. Memory per stream stays near this bound.
 */
export const STREAM_HIGH_WATER_BYTES = 1024 * 1024;

/** The comment a stream writes now and then so that an idle connection stays open. */
const HEARTBEAT = ": heartbeat\n\n";

/**
 * What the writer reads: the ring buffer (pollLines, readWholePage for the long lines it keeps on
 * disk only), the log on disk (history), the last id.
 */
export type StreamEventSource = Pick<EventStore, "pollLines" | "readWholePage" | "history" | "lastId">;

/**
 * Writes one agent's events to a Server-Sent Events response, in id order, each exactly once.
 *
 * A resume (Last-Event-ID) replays the backlog a page at a time, from disk while it is older than
 * the ring buffer and then from the ring, waiting for the socket to drain between pages; when a
 * page comes back short it is the last one, and the writer goes live in the same tick (the event
 * store appends each event before any stream sees it, so nothing falls between). A live client
 * that falls behind by more than the high-water mark goes back to replaying from the store, so a
 * slow reader costs bounded memory and is never cut off.
 */
export class EventStreamWriter {
  readonly #agent: string;
  readonly #source: StreamEventSource;
  readonly #response: ServerResponse;
  readonly #resume: boolean;
  readonly #firstPages: ReplayPageCache;
  /** Text the first write carries before its frames (the stream's opening comment). */
  #pending: string;
  #lastSent: number;
  #live = false;
  #replaying = false;

  constructor(options: {
    agent: string;
    source: StreamEventSource;
    response: ServerResponse;
    /** The last id the client has: replay what follows it; undefined: start with the next event. */
    after: number | undefined;
    /**
     * Written before the first event, in the same write as a replay's first page (the response's
     * head goes with it): one chunk to the socket for the head, the preamble and the page.
     */
    preamble?: string;
    /** Where a replay that fits one page finds its first write (the same store as `source`). */
    firstPages: ReplayPageCache;
  }) {
    this.#agent = options.agent;
    this.#source = options.source;
    this.#response = options.response;
    this.#resume = options.after !== undefined;
    this.#firstPages = options.firstPages;
    this.#pending = options.preamble ?? "";
    this.#lastSent = options.after ?? options.source.lastId(options.agent);
  }

  /**
   * Starts: live at once without a resume point, else after the replay. Returns a promise only
   * when the replay has to wait (for the socket to drain, for a page from disk); a resume whose
   * backlog is in the ring and fits one page is sent and live before this returns.
   */
  start(): Promise<void> | undefined {
    if (!this.#resume) {
      this.#live = true;
      this.#write("");
      return undefined;
    }
    if (!this.#closed && this.#response.writableLength <= STREAM_HIGH_WATER_BYTES) {
      // What is pending (the preamble) and the whole backlog, as bytes kept while the agent's
      // events stay the same: one write, nothing to join nor to encode.
      const page = this.#firstPages.firstPage(this.#agent, this.#lastSent, this.#pending);
      if (page !== undefined) {
        this.#pending = "";
        this.#lastSent = page.lastId;
        if (page.bytes.length > 0) this.#response.write(page.bytes);
        this.#live = true;
        return undefined;
      }
    }
    return this.#replay();
  }

  /** Writes a comment that keeps an idle connection open. */
  heartbeat(): void {
    this.#write(HEARTBEAT);
  }

  /** A bus event (any agent's): sent when live; otherwise the replay reads it from the store. */
  offer(event: AgentEvent): void {
    if (event.agent !== this.#agent || !this.#live) return;
    this.#send(event.id, JSON.stringify(event));
    if (this.#response.writableLength > STREAM_HIGH_WATER_BYTES) {
      this.#live = false;
      void this.#replay();
    }
  }

  get #closed(): boolean {
    return this.#response.destroyed || this.#response.writableEnded;
  }

  async #replay(): Promise<void> {
    if (this.#replaying) return;
    this.#replaying = true;
    try {
      while (!this.#closed) {
        if (this.#response.writableLength > STREAM_HIGH_WATER_BYTES) {
          this.#write("");
          await drained(this.#response);
          continue;
        }
        let page = this.#ringPage();
        if (page.missed > 0) {
          // Older than the ring: a page from disk.
          const before = this.#lastSent;
          this.#write("");
          const lines = await this.#source.history(this.#agent, this.#lastSent, REPLAY_PAGE_EVENTS);
          this.#sendPage(
            lines.map(({ id }) => id),
            lines.map(({ line }) => line),
          );
          if (this.#lastSent > before) continue;
          // Nothing there (a gap a failed write left, a pruned range): on with the ring, read
          // again after the wait, unless it moved on meanwhile.
          const oldest = page.oldest;
          page = this.#ringPage();
          if (page.oldest !== oldest) continue;
        }
        if (!page.whole) {
          // Long lines the ring keeps on disk only: read, sent, and the ring read again after the
          // wait (events that came meanwhile are in it, not yet sent).
          const whole = await this.#source.readWholePage(this.#agent, page);
          this.#sendPage(whole.ids, whole.lines);
          this.#lastSent = Math.max(this.#lastSent, page.next);
          continue;
        }
        this.#sendPage(page.ids, page.lines);
        // A short page is all the ring holds now: live from here, in this same tick.
        if (page.lines.length < REPLAY_PAGE_EVENTS) {
          this.#write("");
          this.#live = true;
          return;
        }
      }
    } finally {
      this.#replaying = false;
    }
  }

  #ringPage(): ReturnType<StreamEventSource["pollLines"]> {
    return this.#source.pollLines(this.#agent, { after: this.#lastSent, limit: REPLAY_PAGE_EVENTS });
  }

  /**
   * Sends a page's events as one write to the socket: the frames joined into one string, not one
   * chunk per event (a replay of 500 events is one write, not 500 buffered chunks and a writev).
   */
  #sendPage(ids: readonly number[], lines: readonly string[]): void {
    // Joined once into a flat string, what is pending (the preamble) first: appending frame by
    // frame builds a rope that the socket's write then flattens, a copy and a string per frame more.
    const frames: string[] = [this.#pending];
    for (let index = 0; index < lines.length; index++) {
      const id = ids[index] ?? 0;
      if (id <= this.#lastSent) continue;
      this.#lastSent = id;
      frames.push("id: ", String(id), "\ndata: ", lines[index] ?? "", "\n\n");
    }
    if (frames.length === 1) return;
    this.#pending = "";
    this.#write(frames.join(""));
  }

  #send(id: number, line: string): void {
    if (id <= this.#lastSent || this.#closed) return;
    this.#lastSent = id;
    this.#write(`id: ${id}\ndata: ${line}\n\n`);
  }

  /** Writes `text` after what is pending (the preamble, once); nothing when both are empty. */
  #write(text: string): void {
    if (this.#closed) return;
    const chunk = this.#pending === "" ? text : this.#pending + text;
    this.#pending = "";
    if (chunk !== "") this.#response.write(chunk);
  }
}

/** Resolves when the response drained its buffer or closed. */
function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off("drain", done);
      response.off("close", done);
      resolve();
    };
    response.once("drain", done);
    response.once("close", done);
  });
}
