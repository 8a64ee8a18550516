import { hash, timingSafeEqual } from "node:crypto";
import { AgentdError } from "../errors/agentd-error.js";

/**
 * Compares a presented token with the real one in constant time: both sides are hashed first, so
 * the comparison neither depends on where they differ nor reveals the token's length.
 */
export function createTokenCheck(token: string): (given: string | undefined) => boolean {
  const expected = digest(token);
  return (given) => given !== undefined && timingSafeEqual(digest(given), expected);
}

/** Checks `Authorization: Bearer <token>`; throws UNAUTHORIZED saying what is missing or wrong. */
export function createBearerCheck(token: string): (authorization: string | undefined) => void {
  const matches = createTokenCheck(token);
  return (authorization) => {
    const match = /^Bearer\s+(.+)$/i.exec(authorization ?? "");
    const given = match?.[1]?.trim();
    if (given === undefined) {
      throw new AgentdError("UNAUTHORIZED", "missing bearer token", {
        hint: "send Authorization: Bearer <token> (agentd token prints it)",
      });
    }
    if (!matches(given)) {
      throw new AgentdError("UNAUTHORIZED", "wrong bearer token", {
        hint: "agentd token prints the token of the daemon of this config",
      });
    }
  };
}

/** One-shot: a Hash object per request cost four times as much. */
function digest(text: string): Buffer {
  return hash("sha256", text, "buffer");
}
