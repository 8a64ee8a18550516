import { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";

/**
 * Where a client of the merged feed (`GET /events`) stands. Within one daemon process the store
 * numbers every event in append order (`sequence`), tagged with the process's `epoch`; a cursor
 * from an earlier process falls back to the time of the last event read (`time`, `agent`, `id`).
 */
export const MergedCursorSchema = z.object({
  epoch: z.string().min(1),
  sequence: z.number().int().nonnegative(),
  time: z.number().nonnegative(),
  agent: z.string(),
  id: z.number().int().nonnegative(),
});
export type MergedCursor = z.infer<typeof MergedCursorSchema>;

/** The opaque cursor string: base64url of the cursor's JSON. */
export function encodeMergedCursor(cursor: MergedCursor): string {
  return Buffer.from(JSON.stringify(cursor), "utf8").toString("base64url");
}

/** Reads a cursor made by `encodeMergedCursor`; undefined for an empty or absent one (from the start). */
export function decodeMergedCursor(text: string | undefined): MergedCursor | undefined {
  if (text === undefined || text === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    value = undefined;
  }
  const parsed = MergedCursorSchema.safeParse(value);
  if (!parsed.success) {
    throw new AgentdError("BAD_REQUEST", `after: "${text}" is not a cursor returned by GET /events`, {
      field: "after",
      hint: "pass the `next` value of the previous response, or omit after to start from the oldest",
    });
  }
  return parsed.data;
}
