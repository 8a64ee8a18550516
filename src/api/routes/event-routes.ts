import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import type { MergedLinesPage } from "../../events/merged-feed.js";
import type { EventStore, PollLinesPage, PollRingPage } from "../../events/event-store.js";
import { AgentEventsQuerySchema, AgentParamsSchema, MergedEventsQuerySchema } from "../request-schemas.js";
import { requireStillAuthenticated } from "../api-auth.js";
import { clientGoneSignal, requireAgent, type RouteContext } from "../route-context.js";
import { routeSchema } from "../zod-route-schema.js";
import { documented } from "../route-responses.js";
import { EventPageSchema, MergedEventPageSchema } from "../response-schemas.js";
import { type PollPageBody, PollPageCache } from "../poll-page-cache.js";
import { CredentialLapses } from "../credential-lapses.js";

const JSON_TYPE = "application/json; charset=utf-8";

/** A poll of one agent's events, as validated. */
type PollRequest = FastifyRequest<{
  Params: z.output<typeof AgentParamsSchema>;
  Querystring: z.output<typeof AgentEventsQuerySchema>;
}>;

/** Runs `answer` while the agent (every agent: undefined) is followed, then stops following it. */
async function whileFollowing(
  store: EventStore,
  agent: string | undefined,
  answer: () => Promise<void> | undefined,
): Promise<void> {
  const unfollow = await store.follow(agent);
  try {
    await answer();
  } finally {
    unfollow();
  }
}

// Events are kept as their JSON text: the body is assembled around it, never serialized again.
function pollBody(page: PollLinesPage): string {
  return `{"events":[${page.lines.join(",")}],"next":${page.next},"oldest":${page.oldest},"missed":${page.missed}}`;
}

/** Never sent: `PollPageCache.body` gives undefined only for a page with a line on disk. */
function emptyBody(): PollPageBody {
  return {
    bytes: Buffer.from(pollBody({ whole: true, lines: [], ids: [], next: 0, oldest: null, missed: 0 })),
    empty: true,
  };
}

function mergedBody(page: MergedLinesPage): string {
  return `{"events":[${page.lines.join(",")}],"next":${JSON.stringify(page.next)},"missed":${page.missed}}`;
}

/** GET /agents/:id/events (cursor poll, long poll with `wait`) and GET /events (merged feed). */
export function registerEventRoutes(app: FastifyInstance, context: RouteContext): void {
  const { services, shutdownSignal, access } = context;
  const store = services.events;
  const pages = new PollPageCache();
  // A poll waiting as its token is revoked, or its session ends, answers 401 at once.
  const lapses = new CredentialLapses(access);
  shutdownSignal.addEventListener("abort", () => lapses.close(), { once: true });

  /** Waits (see EventStore.wait) until the client goes, the server shuts down or the credentials lapse. */
  async function waitWatched(
    request: FastifyRequest,
    reply: FastifyReply,
    wait: (signal: AbortSignal) => Promise<void>,
  ): Promise<void> {
    const watch = clientGoneSignal(request, reply, shutdownSignal);
    const stopHolding = lapses.hold(request.principal, watch.abort);
    try {
      await wait(watch.signal);
    } finally {
      stopHolding();
      watch.release();
    }
    // The events that came while it waited are not for a token revoked meanwhile.
    requireStillAuthenticated(request.principal, access);
  }

  /**
   * The poll's body: the one last sent for the same page while the agent's events stay the same;
   * a promise when the page holds a long line the ring keeps on disk only (read from the log).
   */
  function pollPage(agent: string, after: number, limit: number): PollPageBody | Promise<PollPageBody> {
    const read: { onDisk?: PollRingPage } = {};
    const body = pages.body(agent, store.pageVersion(agent), after, limit, () => {
      const page = store.pollLines(agent, { after, limit });
      if (!page.whole) {
        read.onDisk = page;
        return undefined;
      }
      return { text: pollBody(page), empty: page.lines.length === 0 };
    });
    if (body !== undefined || read.onDisk === undefined) return body ?? emptyBody();
    return store.readWholePage(agent, read.onDisk).then((page) => ({
      bytes: Buffer.from(pollBody(page), "utf8"),
      empty: page.lines.length === 0,
    }));
  }

  app.get<{
    Params: z.output<typeof AgentParamsSchema>;
    Querystring: z.output<typeof AgentEventsQuerySchema>;
  }>(
    "/agents/:id/events",
    {
      schema: {
        summary: "The agent's events with id > after; wait (seconds, up to 60) long-polls for the first one",
        params: routeSchema(AgentParamsSchema),
        querystring: routeSchema(AgentEventsQuerySchema),
        ...documented({
          operationId: "pollAgentEvents",
          success: {
            status: 200,
            description: "Events with id > after, oldest first",
            schema: EventPageSchema,
          },
          errors: [400, 404],
        }),
      },
    },
    (request, reply) => {
      // On a cluster, a node reads in full the agents its clients follow (from their latest events
      // on); a node's own log has every agent: the common poll is answered in this same tick.
      if (store.followsEveryAgent) return answerPoll(request, reply);
      return whileFollowing(store, request.params.id, () => answerPoll(request, reply));
    },
  );

  /** Answers a poll: at once, or (a long poll with nothing yet) once an event came or `wait` ran out. */
  function answerPoll(request: PollRequest, reply: FastifyReply): Promise<void> | undefined {
    const { id } = request.params;
    const { after, limit } = request.query;
    requireAgent(services, id);
    const page = pollPage(id, after, limit);
    if (page instanceof Promise) return page.then((read) => answerWith(request, reply, read));
    return answerWith(request, reply, page);
  }

  function answerWith(
    request: PollRequest,
    reply: FastifyReply,
    page: PollPageBody,
  ): Promise<void> | undefined {
    if (page.empty && request.query.wait > 0 && !shutdownSignal.aborted) {
      return waitThenAnswer(request, reply);
    }
    reply.type(JSON_TYPE).send(page.bytes);
    return undefined;
  }

  async function waitThenAnswer(request: PollRequest, reply: FastifyReply): Promise<void> {
    const { id } = request.params;
    const { after, limit, wait } = request.query;
    await waitWatched(request, reply, (signal) => store.wait(id, after, wait * 1_000, signal));
    reply.type(JSON_TYPE).send((await pollPage(id, after, limit)).bytes);
  }

  app.get<{ Querystring: z.output<typeof MergedEventsQuerySchema> }>(
    "/events",
    {
      schema: {
        summary: "Events of every agent in arrival order; after is the opaque cursor `next` of the last page",
        querystring: routeSchema(MergedEventsQuerySchema),
        ...documented({
          operationId: "pollEvents",
          success: {
            status: 200,
            description: "Events of every agent after the cursor",
            schema: MergedEventPageSchema,
          },
          errors: [400],
        }),
      },
    },
    async (request, reply) => {
      const { after, limit, wait } = request.query;
      const unfollow = await store.follow(undefined);
      try {
        let page = await store.mergedLines(after, limit);
        if (page.lines.length === 0 && wait > 0 && !shutdownSignal.aborted) {
          await waitWatched(request, reply, (signal) => store.waitForAny(wait * 1_000, signal));
          page = await store.mergedLines(after, limit);
        }
        return reply.type("application/json; charset=utf-8").send(mergedBody(page));
      } finally {
        unfollow();
      }
    },
  );
}
