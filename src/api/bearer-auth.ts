import { timingSafeEqual } from "node:crypto";
import { AgentdError } from "../errors/agentd-error.js";

/** The fewest bytes a comparison covers, so its time does not tell a short token's length. */
const COMPARED_BYTES = 256;

/**
 * Compares a presented token with the real one in constant time, without hashing either on every
 * request: the presented one is encoded into a buffer of a fixed size (the real one's bytes, zeros
 * after them), all of which is compared with timingSafeEqual; the lengths are compared apart and
 * the two answers joined without a branch. The time depends on the presented token's length alone,
 * never on where the two differ nor on the real token's length (under COMPARED_BYTES).
 */
export function createTokenCheck(token: string): (given: string | undefined) => boolean {
  const expectedLength = Buffer.byteLength(token, "utf8");
  const size = Math.max(COMPARED_BYTES, expectedLength);
  const expected = Buffer.alloc(size);
  expected.write(token, "utf8");
  // One buffer for every check: a check runs to its end within one call, none overlaps another.
  const presented = Buffer.alloc(size);
  return (given) => {
    if (given === undefined) return false;
    presented.fill(0);
    presented.write(given, "utf8");
    const sameLength = Buffer.byteLength(given, "utf8") === expectedLength;
    const sameBytes = timingSafeEqual(presented, expected);
    return sameLength && sameBytes;
  };
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
