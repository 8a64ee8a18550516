import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { AgentParamsSchema, StreamQuerySchema } from "../request-schemas.js";
import { clientGoneSignal, requireAgent, type RouteContext } from "../route-context.js";
import { routeSchema } from "../zod-route-schema.js";
import { errorResponses } from "../route-responses.js";

/** A client this far behind (bytes not yet sent) is cut off; it reconnects with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

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
 * With Last-Event-ID (or ?after=) it first replays what followed that id, from memory and, for a
 * client further behind, from disk; without either it starts with the next event. Comments keep
 * idle connections open.
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
      requireAgent(services, agent);
      const replayFrom = lastEventIdOf(request.headers["last-event-id"]) ?? request.query.after;
      const watch = clientGoneSignal(request, reply, shutdownSignal);
      reply.hijack();
      const response = reply.raw;
      response.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        connection: "keep-alive",
        "x-accel-buffering": "no",
      });
      response.write(": agentd event stream\nretry: 2000\n\n");

      let lastSent = replayFrom ?? services.events.lastId(agent);
      let live = false;
      const queued: Array<{ id: number; line: string }> = [];
      const send = (id: number, line: string) => {
        if (id <= lastSent || response.destroyed) return;
        lastSent = id;
        response.write(`id: ${id}\ndata: ${line}\n\n`);
        if (response.writableLength > MAX_BUFFERED_BYTES) response.destroy();
      };
      // Subscribed before the replay, so nothing published meanwhile is lost; `send` drops repeats.
      const unsubscribe = services.bus.subscribe((event) => {
        if (event.agent !== agent) return;
        const line = JSON.stringify(event);
        if (live) send(event.id, line);
        else queued.push({ id: event.id, line });
      });
      const heartbeat = setInterval(() => response.write(": heartbeat\n\n"), heartbeatMilliseconds);
      const finish = () => {
        clearInterval(heartbeat);
        unsubscribe();
        watch.release();
        if (!response.writableEnded) response.end();
      };
      watch.signal.addEventListener("abort", finish, { once: true });
      // Events the ring buffer no longer holds come from disk; while that is read, the ring may
      // move on again, so check again until the rest is in memory.
      const replay = async () => {
        for (;;) {
          const page = services.events.pollLines(agent, { after: lastSent, limit: Number.MAX_SAFE_INTEGER });
          if (page.missed > 0) {
            const before = lastSent;
            for (const { id, line } of await services.events.history(agent, lastSent, page.missed)) {
              send(id, line);
            }
            if (lastSent > before) continue;
          }
          page.lines.forEach((line, index) => send(page.ids[index] ?? 0, line));
          return;
        }
      };

      if (replayFrom !== undefined) await replay();
      for (const { id, line } of queued.splice(0)) send(id, line);
      live = true;
      if (watch.signal.aborted) finish();
    },
  );
}
