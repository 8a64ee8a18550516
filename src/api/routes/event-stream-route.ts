import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { requireStillAuthenticated, stillAuthenticated } from "../api-auth.js";
import { AgentParamsSchema, StreamQuerySchema } from "../request-schemas.js";
import { REPLAY_PAGE_EVENTS } from "../event-stream-writer.js";
import { EventStreamHub, type HubStream } from "../event-stream-hub.js";
import { OpenEventStream } from "../open-event-stream.js";
import { ReplayPageCache } from "../replay-page-cache.js";
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

/** What a stream that follows no agent (a node's own log has them all) calls as it ends. */
const FOLLOWS_ALREADY = (): void => undefined;

/**
 * GET /agents/:id/events/stream: Server-Sent Events, `id:` = event id, `data:` = the event's JSON.
 * With Last-Event-ID (or ?after=) it first replays what followed that id, a bounded page at a time
 * and waiting for the socket to drain, from disk while it is older than memory; without either it
 * starts with the next event. Comments keep idle connections open. See EventStreamWriter.
 *
 * A stream ends when its connection closes or the server shuts down. A replay costs what a bare
 * route writing the same bytes costs, or near: no AbortController per stream (its abort builds a
 * DOMException with a stack), no closure per stream (OpenEventStream), one bus subscription, one
 * heartbeat timer and one listener on the shutdown signal for all streams (EventStreamHub), the
 * head, the preamble and a short backlog in one write of bytes kept while the agent's events stay
 * the same (ReplayPageCache), and no promise when the backlog is in memory.
 */
export function registerEventStreamRoute(app: FastifyInstance, context: RouteContext): void {
  const { services, shutdownSignal, heartbeatMilliseconds, access } = context;
  /**
   * The open streams: the server's shutdown ends them all, a token's revocation or a session's end
   * those opened with it.
   */
  const lapsed = (stream: HubStream) => !stillAuthenticated(stream.principal, access);
  // A session that runs out tells nothing: the heartbeats find it.
  const hub = new EventStreamHub(services.bus, heartbeatMilliseconds, lapsed);
  const endLapsed = () => hub.endWhere(lapsed);
  const stopFollowing = [access.tokens?.onChange(endLapsed), access.sessions.onEnd(endLapsed)];
  shutdownSignal.addEventListener(
    "abort",
    () => {
      for (const stop of stopFollowing) stop?.();
      hub.endAll();
    },
    { once: true },
  );
  const firstPages = new ReplayPageCache(services.events, { pageEvents: REPLAY_PAGE_EVENTS });

  /** Streams the agent's events; `unfollow` is called when the stream ends (or fails to start). */
  function stream(request: StreamRequest, reply: FastifyReply, unfollow: () => void): void {
    const agent = request.params.id;
    let replayFrom: number | undefined;
    try {
      // Revoked while a cluster node caught up with the agent: no stream.
      requireStillAuthenticated(request.principal, access);
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
    new OpenEventStream({
      agent,
      principal: request.principal,
      response,
      source: services.events,
      firstPages,
      after: replayFrom,
      preamble: PREAMBLE,
      hub,
      shutdownSignal,
      unfollow,
      logger: request.log,
    }).start();
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
      if (services.events.followsEveryAgent) return stream(request, reply, FOLLOWS_ALREADY);
      return services.events.follow(request.params.id).then((unfollow) => stream(request, reply, unfollow));
    },
  );
}
