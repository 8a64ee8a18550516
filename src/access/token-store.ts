import type { TokenRecord } from "./api-token.js";

/**
 * Where named tokens are kept: a file in `data_dir` or a PostgreSQL table. Every daemon of a
 * cluster reads the same ones.
 */
export interface TokenStore {
  /** Every token not revoked. */
  list(): Promise<TokenRecord[]>;
  /** Adds a token; throws CONFLICT when one of that name exists. */
  create(record: TokenRecord): Promise<void>;
  /** Removes the token; false when there was none of that name. */
  revoke(name: string): Promise<boolean>;
  /** A number that changes whenever the tokens may have changed (cheap: read every second). */
  version(): Promise<string>;
  close?(): Promise<void>;
}
