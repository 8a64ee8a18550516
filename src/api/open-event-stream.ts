import type { ServerResponse } from "node:http";
import type { FastifyBaseLogger } from "fastify";
import type { AgentEvent } from "../events/agent-event.js";
import type { Principal } from "./api-auth.js";
import type { EventStreamHub, HubMembership, HubStream } from "./event-stream-hub.js";
import { EventStreamWriter, type StreamEventSource } from "./event-stream-writer.js";
import type { ReplayPageCache } from "./replay-page-cache.js";

/** Where a response keeps its open stream, so that one listener function serves every stream. */
const OPEN_STREAM = Symbol("agentd open event stream");

/** A response that carries an event stream. */
interface StreamResponse extends ServerResponse {
  [OPEN_STREAM]?: OpenEventStream;
}

/** The `close` listener of every stream's response: ends the stream it carries. */
function endOnClose(this: StreamResponse): void {
  this[OPEN_STREAM]?.end();
}

export interface OpenEventStreamOptions {
  agent: string;
  /** Who opens the stream: it ends when their token is revoked or their session ends. */
  principal: Principal | undefined;
  /** A response whose head is written (not sent: it goes with the first write). */
  response: ServerResponse;
  source: StreamEventSource;
  firstPages: ReplayPageCache;
  /** The last id the client has: replay what follows it; undefined: start with the next event. */
  after: number | undefined;
  /** Written before the first event (see EventStreamWriter). */
  preamble: string;
  hub: EventStreamHub;
  /** Aborted when the server shuts down: a stream that starts meanwhile ends after its replay. */
  shutdownSignal: AbortSignal;
  /** Called once when the stream ends (a cluster node stops following the agent). */
  unfollow: () => void;
  logger: FastifyBaseLogger;
}

/**
 * One open `GET /agents/:id/events/stream`: its writer, its place in the hub (bus events and
 * heartbeats) and its end (the client left, the server shut down, the replay failed). An object
 * with methods and one listener function shared by all streams: opening a stream makes no
 * closure, as a bare route writing the same bytes makes none.
 */
export class OpenEventStream implements HubStream {
  readonly agent: string;
  readonly principal: Principal | undefined;
  readonly #response: StreamResponse;
  readonly #writer: EventStreamWriter;
  readonly #hub: EventStreamHub;
  readonly #shutdownSignal: AbortSignal;
  readonly #unfollow: () => void;
  readonly #logger: FastifyBaseLogger;
  /** Its place in the hub, from `start` on. */
  #membership: HubMembership | undefined;
  #ended = false;

  constructor(options: OpenEventStreamOptions) {
    this.agent = options.agent;
    this.principal = options.principal;
    this.#response = options.response;
    this.#hub = options.hub;
    this.#shutdownSignal = options.shutdownSignal;
    this.#unfollow = options.unfollow;
    this.#logger = options.logger;
    // The writer reads its own fields of the same options: no second object per stream.
    this.#writer = new EventStreamWriter(options);
  }

  /**
   * Joins the hub and starts the writer (a replay, then live). A stream whose replay waits (for the
   * socket to drain, for a page from disk) ends after it when the server shut down or the client
   * left meanwhile.
   */
  start(): void {
    const response = this.#response;
    // Joined before the replay: the writer takes bus events only once it is live, and reads the
    // ones published meanwhile from the store.
    this.#membership = this.#hub.add(this);
    response[OPEN_STREAM] = this;
    response.on("close", endOnClose);
    let replay: Promise<void> | undefined;
    try {
      replay = this.#writer.start();
    } catch (error) {
      this.#failed(error);
      return;
    }
    if (replay === undefined) this.#endIfGone();
    else
      replay.then(
        () => this.#endIfGone(),
        (error: unknown) => this.#failed(error),
      );
  }

  /** A bus event (any of the agent's): see EventStreamWriter.offer. */
  offer(event: AgentEvent): void {
    this.#writer.offer(event);
  }

  /** Writes a comment that keeps an idle connection open. */
  heartbeat(): void {
    this.#writer.heartbeat();
  }

  /** Ends the stream (again: nothing). */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const response = this.#response;
    // The `close` listener stays (the response is this stream's alone, and closes once): it finds
    // no stream any more. Removing it would cost a listener search on every stream's end.
    response[OPEN_STREAM] = undefined;
    if (this.#membership !== undefined) this.#hub.remove(this.#membership);
    this.#unfollow();
    // A connection the client closed takes no end (it would only fail on the closed socket).
    if (!response.writableEnded && !response.destroyed) response.end();
  }

  /**
   * A server shutting down as the stream started: the replay, then the end. A client gone before
   * the stream started (while a cluster's node caught up) had no listener to tell.
   */
  #endIfGone(): void {
    if (this.#shutdownSignal.aborted || this.#response.destroyed) this.end();
  }

  /** A replay that failed: logged, and the stream ended. */
  #failed(error: unknown): void {
    this.#logger.error({ err: error, agent: this.agent }, "event stream replay failed");
    this.end();
  }
}
