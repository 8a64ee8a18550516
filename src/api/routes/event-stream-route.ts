import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { AgentParamsSchema, StreamQuerySchema } from "../request-schemas.js";
import { EventStreamWriter } from "../event-stream-writer.js";
import { EventStreamHub } from "../event-stream-hub.js";
import { requireAgent, type RouteContext } from "../route-context.js";
import { routeSchema } from "../zod-route-schema.js";
import { errorResponses } from "../route-responses.js";

function lastEventIdOf(header: string | string[] | undefined): number | undefined {
  if (header === undefined || header === "") return undefined;
  if (typeof header !== "string" || !/^\d{1,15}$/.test(header)) {
    throw new AgentdError("BAD_REQUEST", `header "last-event-id": must be a whole number, 0 or more`, {
      field: "last-event-id",
    });
  }
  return Number(header);
}

/** The stream's opening comment and the client's reconnection delay, before any event. */
const PREAMBLE = ": agentd event stream\nretry: 2000\n\n";

const STREAM_HEAD = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

type StreamRequest = FastifyRequest<{
  Params: z.output<typeof AgentParamsSchema>;
  Querystring: z.output<typeof StreamQuerySchema>;
}>;

/** A replay that failed: logged, and its stream ended. */
function replayFailed(request: StreamRequest, error: unknown, end: () => void): void {
  request.log.error({ err: error, agent: request.params.id }, "event stream replay failed");
  end();
}

/**
 * GET /agents/:id/events/stream: Server-Sent Events, `id:` = event id, `data:` = the event's JSON.
 * With Last-Event-ID (or ?after=) it first replays what followed that id, a bounded page at a time
 * and waiting for the socket to drain, from disk while it is older than memory; without either it
 * starts with the next event. Comments keep idle connections open. See EventStreamWriter.
 *
 * A stream ends when its connection closes or the server shuts down. A replay costs what a bare
 * route writing the same bytes costs, or near: no AbortController per stream (its abort builds a
 * DOMException with a stack), one bus subscription, one heartbeat timer and one listener on the
 * shutdown signal for all streams (EventStreamHub), the head, the preamble and the first page in
 * one write, and no promise when the backlog is in memory.
 */
export function registerEventStreamRoute(app: FastifyInstance, context: RouteContext): void {
  const { services, shutdownSignal, heartbeatMilliseconds } = context;
  /** The open streams: the server's shutdown ends them all. */
  const hub = new EventStreamHub(services.bus, heartbeatMilliseconds);
  shutdownSignal.addEventListener("abort", () => hub.endAll(), { once: true });

  /** Streams the agent's events; `unfollow` is called when the stream ends (or fails to start). */
  function stream(request: StreamRequest, reply: FastifyReply, unfollow: () => void): void {
    const agent = request.params.id;
    let replayFrom: number | undefined;
    try {
      requireAgent(services, agent);
      replayFrom = lastEventIdOf(request.headers["last-event-id"]) ?? request.query.after;
    } catch (error) {
      unfollow();
      throw error;
    }
    reply.hijack();
    const response = reply.raw;
    // Sent with the first write: the preamble, and a replay's first page with it.
    response.writeHead(200, STREAM_HEAD);
    const writer = new EventStreamWriter({
      agent,
      source: services.events,
      response,
      after: replayFrom,
      preamble: PREAMBLE,
    });
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      response.off("close", end);
      remove();
      unfollow();
      // A connection the client closed takes no end (it would only fail on the closed socket).
      if (!response.writableEnded && !response.destroyed) response.end();
    };
    // Added before the replay: the writer takes bus events only once it is live, and reads the
    // ones published meanwhile from the store.
    const remove = hub.add({
      agent,
      offer: (event) => writer.offer(event),
      heartbeat: () => writer.heartbeat(),
      end,
    });
    response.once("close", end);
    // A server shutting down as the stream started: the replay, then the end. A client gone before
    // the stream started (while a cluster's node caught up) had no listener to tell.
    const endIfGone = () => {
      if (shutdownSignal.aborted || response.destroyed) end();
    };
    let replay: Promise<void> | undefined;
    try {
      replay = writer.start();
    } catch (error) {
      replayFailed(request, error, end);
      return;
    }
    if (replay === undefined) endIfGone();
    else replay.then(endIfGone, (error: unknown) => replayFailed(request, error, end));
  }

  app.get<{ Params: z.output<typeof AgentParamsSchema>; Querystring: z.output<typeof StreamQuerySchema> }>(
    "/agents/:id/events/stream",
    {
      schema: {
        summary: "The agent's events live as Server-Sent Events; honours Last-Event-ID",
        params: routeSchema(AgentParamsSchema),
        querystring: routeSchema(StreamQuerySchema),
        operationId: "streamAgentEvents",
        response: {
          200: {
            description:
              "Server-Sent Events: `id:` is the event id, `data:` the event as JSON; a comment line every 15 s keeps the connection open. Send Last-Event-ID (or ?after=) to resume.",
            content: { "text/event-stream": { schema: { type: "string" } } },
          },
          ...errorResponses([400, 404]),
        },
      },
    },
    (request, reply) => {
      // On a cluster, a node reads in full the agents its clients follow, while they do; a node's
      // own log has every agent.
      if (services.events.followsEveryAgent) return stream(request, reply, () => undefined);
      return services.events.follow(request.params.id).then((unfollow) => stream(request, reply, unfollow));
    },
  );
}
