import type pg from "pg";

/**
 * A writer held inside its transaction, just before COMMIT, with every lock it took: `release`
 * lets it commit. A thin wrapper around a real client, so the batch runs the real statements.
 */
export function heldAtCommit(client: pg.PoolClient): {
  client: pg.PoolClient;
  atCommit: Promise<void>;
  release: () => void;
} {
  let release = () => undefined as void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let reached = () => undefined as void;
  const atCommit = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const query = client.query.bind(client) as (text: string, values?: unknown[]) => Promise<unknown>;
  const wrapped = new Proxy(client, {
    get(target, property, receiver) {
      if (property !== "query") return Reflect.get(target, property, receiver) as unknown;
      return async (text: string, values?: unknown[]) => {
        if (text === "COMMIT") {
          reached();
          await gate;
        }
        return query(text, values);
      };
    },
  });
  return { client: wrapped, atCommit, release };
}
