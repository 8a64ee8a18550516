/** The body of one poll answer, as kept: the bytes sent and whether the page held no event. */
export interface PollPageBody {
  bytes: Buffer;
  empty: boolean;
}

/** What a kept body was read for: the agent's page version (EventStore.pageVersion) and the cursor. */
interface KeptPage extends PollPageBody {
  version: number;
  after: number;
  limit: number;
}

export interface PollPageCacheOptions {
  /** Bodies larger than this are not kept (default 64 KiB). */
  largestBody?: number;
  /** Past this many bytes kept in all, every kept body is forgotten (default 8 MiB). */
  totalBytes?: number;
}

const DEFAULT_LARGEST_BODY = 64 * 1024;
const DEFAULT_TOTAL_BYTES = 8 * 1024 * 1024;

/**
 * The last poll answer of each agent, as the bytes sent, while the agent's events stay as they
 * were: pollers of an agent that is idle ask for the same page again and again (the same cursor,
 * nothing new), and each would otherwise read the ring, join the page's lines into a body and
 * encode it anew. One body per agent (the cursor last asked for), bounded in size and in total.
 */
export class PollPageCache {
  readonly #pages = new Map<string, KeptPage>();
  readonly #largestBody: number;
  readonly #totalBytes: number;
  #bytes = 0;

  constructor(options: PollPageCacheOptions = {}) {
    this.#largestBody = options.largestBody ?? DEFAULT_LARGEST_BODY;
    this.#totalBytes = options.totalBytes ?? DEFAULT_TOTAL_BYTES;
  }

  /**
   * The agent's page after `after` (at most `limit` events) at `version`: the kept one when it was
   * read for the same, else `read()`'s, kept in its place. Undefined when `read` has no body to
   * give at once (a page to read from disk first, which is never kept).
   */
  body(
    agent: string,
    version: number,
    after: number,
    limit: number,
    read: () => { text: string; empty: boolean },
  ): PollPageBody;
  body(
    agent: string,
    version: number,
    after: number,
    limit: number,
    read: () => { text: string; empty: boolean } | undefined,
  ): PollPageBody | undefined;
  body(
    agent: string,
    version: number,
    after: number,
    limit: number,
    read: () => { text: string; empty: boolean } | undefined,
  ): PollPageBody | undefined {
    const kept = this.#pages.get(agent);
    if (kept !== undefined && kept.version === version && kept.after === after && kept.limit === limit) {
      return kept;
    }
    const fresh = read();
    if (fresh === undefined) return undefined;
    const { text, empty } = fresh;
    const page: KeptPage = { bytes: Buffer.from(text, "utf8"), empty, version, after, limit };
    if (kept !== undefined) {
      this.#pages.delete(agent);
      this.#bytes -= kept.bytes.length;
    }
    if (page.bytes.length <= this.#largestBody) {
      if (this.#bytes + page.bytes.length > this.#totalBytes) {
        this.#pages.clear();
        this.#bytes = 0;
      }
      this.#pages.set(agent, page);
      this.#bytes += page.bytes.length;
    }
    return page;
  }

  /** Bytes kept in all. */
  get keptBytes(): number {
    return this.#bytes;
  }
}
