import { createHash, timingSafeEqual } from "node:crypto";
import { AgentdError } from "../errors/agentd-error.js";

/**
 * Checks `Authorization: Bearer <token>` in constant time: both sides are hashed first, so the
 * comparison neither depends on where they differ nor reveals the token's length.
 */
export function createBearerCheck(token: string): (authorization: string | undefined) => void {
  const expected = digest(token);
  return (authorization) => {
    const match = /^Bearer\s+(.+)$/i.exec(authorization ?? "");
    const given = match?.[1]?.trim();
    if (given === undefined) {
      throw new AgentdError("UNAUTHORIZED", "missing bearer token", {
        hint: "send Authorization: Bearer <server.token from config.yaml>",
      });
    }
    if (!timingSafeEqual(digest(given), expected)) {
      throw new AgentdError("UNAUTHORIZED", "wrong bearer token", {
        hint: "send the server.token of the daemon's config.yaml",
      });
    }
  };
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
