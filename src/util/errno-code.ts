import { constants } from "node:os";

/** errno numbers to names (the first name of a number kept: EAGAIN before EWOULDBLOCK). */
const NAMES = new Map<number, string>();
for (const [name, number] of Object.entries(constants.errno)) if (!NAMES.has(number)) NAMES.set(number, name);

/**
 * The errno name of a system error: its `code`, or, where Node has no name for the error, the
 * name of its numeric `errno`. Node 20 (its libuv) knows no EDQUOT: a write over a quota fails
 * with code `UNKNOWN` (`Unknown system error -122` from the promise API) and errno -122, which this
 * names `EDQUOT`. Any other `code` (a SQLSTATE of PostgreSQL, a code of agentd) is returned as it
 * is; undefined for an error with neither.
 */
export function errnoCodeOf(error: unknown): string | undefined {
  if (error === null || typeof error !== "object") return undefined;
  const { code, errno } = error as { code?: unknown; errno?: unknown };
  const named = typeof code === "string" && code !== "" ? code : undefined;
  if (named !== undefined && named !== "UNKNOWN" && !named.startsWith("Unknown system error")) return named;
  if (typeof errno === "number") return NAMES.get(Math.abs(errno)) ?? named;
  return named;
}
