import { AgentdError } from "../errors/agentd-error.js";

/** One page of a list answer: the items and the cursor of the next page (null: this was the last). */
export interface ListPage<Item> {
  items: Item[];
  next: string | null;
}

/** How a list is ordered and how its cursor reads. */
export interface ListOrder<Item> {
  /**
   * The item's place in the list, compared as strings. Items may share a key (an agent id defined
   * in two folders): a page never ends between them, so it may hold a few more than `limit`.
   */
  keyOf(item: Item): string;
  /** The cursor a client passes on for a key (default: the key itself). */
  cursorOf?(key: string): string;
  /** The key a cursor stands for; undefined when it is not one (default: the cursor itself). */
  keyOfCursor?(cursor: string): string | undefined;
}

/**
 * The items after the cursor `after` (the `next` of the previous page), in key order, at most
 * `limit`. The cursor is a position, not an item: an item removed since (an answered approval)
 * does not break the next page. A cursor that is not one is a BAD_REQUEST.
 */
export function pageOf<Item>(
  items: readonly Item[],
  order: ListOrder<Item>,
  after: string | undefined,
  limit: number,
): ListPage<Item> {
  const afterKey = after === undefined ? undefined : (order.keyOfCursor ?? ((cursor) => cursor))(after);
  if (after !== undefined && afterKey === undefined) {
    throw new AgentdError("BAD_REQUEST", `query parameter "after": not a cursor this list gave`, {
      field: "after",
      hint: "pass the `next` of the previous page, or leave after out for the first page",
    });
  }
  const keyed = items.map((item) => ({ item, key: order.keyOf(item) }));
  keyed.sort((left, right) => compare(left.key, right.key));
  const rest = afterKey === undefined ? keyed : keyed.filter(({ key }) => compare(key, afterKey) > 0);
  let end = Math.min(limit, rest.length);
  while (end < rest.length && end > 0 && rest[end]?.key === rest[end - 1]?.key) end++;
  const page = rest.slice(0, end);
  const last = page.at(-1);
  return {
    items: page.map(({ item }) => item),
    next: rest.length > end && last ? (order.cursorOf ?? ((key) => key))(last.key) : null,
  };
}

function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/** An opaque cursor for keys that are not fit for a URL as they are (times and ids). */
export const opaqueCursor = {
  cursorOf: (key: string): string => Buffer.from(key, "utf8").toString("base64url"),
  keyOfCursor: (cursor: string): string | undefined =>
    /^[A-Za-z0-9_-]{1,2048}$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("utf8") : undefined,
};
