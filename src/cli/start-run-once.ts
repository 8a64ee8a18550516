import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import type { DaemonClient } from "./daemon-client.js";

/** Attempts of one `POST /agents/:id/runs` at most, the first included. */
const ATTEMPTS = 5;
/** The wait before the second attempt; it doubles after each. */
const FIRST_RETRY_MILLISECONDS = 500;

/**
 * Whether a failed start can be sent again with the same key: the daemon was not reached or its
 * answer was lost (it may have made the run: the key finds it), or it answered 503 (its store or
 * the daemon itself is away for now; nothing was made, or the key finds what was).
 */
function isRetryable(error: unknown): boolean {
  if (!(error instanceof AgentdError)) return false;
  // The codes the API answers 503 with.
  return ["DAEMON_UNREACHABLE", "STORE_UNAVAILABLE", "SHUTTING_DOWN"].includes(error.code);
}

/**
 * `POST /agents/:id/runs` with an `Idempotency-Key` of its own (a random UUID per call), sent again
 * with the same key after a network error or a 503, so a run is made once however many times the
 * request goes out: the daemon answers the same run to a key it has seen (within 24 h).
 */
export async function startRunOnce<T>(
  client: DaemonClient,
  agentPath: string,
  body: unknown,
  schema: z.ZodType<T>,
  key: string = randomUUID(),
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.post(`${agentPath}/runs`, body, schema, { "idempotency-key": key });
    } catch (error) {
      if (attempt >= ATTEMPTS || !isRetryable(error)) throw error;
      await delay(FIRST_RETRY_MILLISECONDS * 2 ** (attempt - 1));
    }
  }
}
