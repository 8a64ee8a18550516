import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { AgentParamsSchema, StreamQuerySchema } from "../request-schemas.js";
import { EventStreamWriter } from "../event-stream-writer.js";
import { clientGoneSignal, requireAgent, type RouteContext } from "../route-context.js";
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

/**
 * GET /agents/:id/events/stream: Server-Sent Events, `id:` = event id, `data:` = the event's JSON.
 * With Last-Event-ID (or ?after=) it first replays what followed that id, a bounded page at a time
 * and waiting for the socket to drain, from disk while it is older than memory; without either it
 * starts with the next event. Comments keep idle connections open. See EventStreamWriter.
 */
export function registerEventStreamRoute(app: FastifyInstance, context: RouteContext): void {
  const { services, shutdownSignal, heartbeatMilliseconds } = context;
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
    async (request, reply) => {
      const agent = request.params.id;
      // On a cluster, a node reads in full the agents its clients follow, while they do.
      const unfollow = await services.events.follow(agent);
      try {
        requireAgent(services, agent);
      } catch (error) {
        unfollow();
        throw error;
      }
      const replayFrom = lastEventIdOf(request.headers["last-event-id"]) ?? request.query.after;
      const watch = clientGoneSignal(request, reply, shutdownSignal);
      reply.hijack();
      const response = reply.raw;
      // The head, the preamble and a replay's first page leave in one write to the socket.
      response.cork();
      response.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        connection: "keep-alive",
        "x-accel-buffering": "no",
      });
      response.write(": agentd event stream\nretry: 2000\n\n");

      const writer = new EventStreamWriter({
        agent,
        source: services.events,
        response,
        after: replayFrom,
      });
      // Subscribed before the replay: the writer takes bus events only once it is live, and reads
      // the ones published meanwhile from the store.
      const unsubscribe = services.bus.subscribe((event) => writer.offer(event), { complete: true });
      const heartbeat = setInterval(() => response.write(": heartbeat\n\n"), heartbeatMilliseconds);
      const finish = () => {
        clearInterval(heartbeat);
        unsubscribe();
        unfollow();
        watch.release();
        if (!response.writableEnded) response.end();
      };
      watch.signal.addEventListener("abort", finish, { once: true });
      const started = writer.start();
      response.uncork();
      await started;
      if (watch.signal.aborted) finish();
    },
  );
}
