import type { EventStore } from "../events/event-store.js";

/** What the cache reads: the ring buffer (pollLines) and when an agent's page last changed. */
export type ReplayPageSource = Pick<EventStore, "pollLines" | "pageVersion">;

/**
 * The first write of a replay that fits one page: the stream's opening text and the frames of
 * every event after the cursor, as the bytes sent, and the id of the last of them.
 */
export interface ReplayFirstPage {
  readonly bytes: Buffer;
  /** The last event id the page carries; the cursor itself when it carries none. */
  readonly lastId: number;
}

/** What a kept page was built for: the agent's page version, the cursor and the opening text. */
interface KeptPage extends ReplayFirstPage {
  version: number;
  after: number;
  lead: string;
}

export interface ReplayPageCacheOptions {
  /** Most events one page holds: a backlog this long or longer is replayed page by page. */
  pageEvents: number;
  /** Pages larger than this are not kept (default 64 KiB). */
  largestPage?: number;
  /** Past this many bytes kept in all, every kept page is forgotten (default 8 MiB). */
  totalBytes?: number;
}

const DEFAULT_LARGEST_PAGE = 64 * 1024;
const DEFAULT_TOTAL_BYTES = 8 * 1024 * 1024;

/** One Server-Sent Events frame: `id:` the event id, `data:` its stored JSON line. */
export function eventFrame(id: number, line: string): string {
  return `id: ${id}\ndata: ${line}\n\n`;
}

/**
 * The first write of each agent's last short replay, as the bytes sent, while the agent's events
 * stay as they were: clients that resume an agent from the same Last-Event-ID (a dashboard's
 * reconnect, many readers of one agent) would each read the ring, build the same frames and encode
 * them anew. One page per agent (the cursor last asked for), bounded in size and in total. A
 * backlog older than the ring or longer than a page is not a first page: the stream replays it a
 * page at a time (EventStreamWriter).
 */
export class ReplayPageCache {
  readonly #source: ReplayPageSource;
  readonly #pageEvents: number;
  readonly #largestPage: number;
  readonly #totalBytes: number;
  readonly #pages = new Map<string, KeptPage>();
  #bytes = 0;

  constructor(source: ReplayPageSource, options: ReplayPageCacheOptions) {
    this.#source = source;
    this.#pageEvents = options.pageEvents;
    this.#largestPage = options.largestPage ?? DEFAULT_LARGEST_PAGE;
    this.#totalBytes = options.totalBytes ?? DEFAULT_TOTAL_BYTES;
  }

  /**
   * `lead` and the frames of the agent's events after `after`, when they are all in the ring and
   * fewer than a page; undefined otherwise (the replay goes page by page).
   */
  firstPage(agent: string, after: number, lead: string): ReplayFirstPage | undefined {
    const version = this.#source.pageVersion(agent);
    const kept = this.#pages.get(agent);
    if (kept !== undefined && kept.version === version && kept.after === after && kept.lead === lead) {
      return kept;
    }
    const page = this.#source.pollLines(agent, { after, limit: this.#pageEvents });
    // A long line kept on disk only is read by the replay, page by page.
    if (!page.whole || page.missed > 0 || page.lines.length >= this.#pageEvents) return undefined;
    // Joined once into a flat string, then encoded once.
    const parts: string[] = [lead];
    let lastId = after;
    for (let index = 0; index < page.lines.length; index++) {
      lastId = page.ids[index] ?? lastId;
      parts.push(eventFrame(lastId, page.lines[index] ?? ""));
    }
    const built: KeptPage = { bytes: Buffer.from(parts.join(""), "utf8"), lastId, version, after, lead };
    this.#keep(agent, kept, built);
    return built;
  }

  /** Bytes kept in all. */
  get keptBytes(): number {
    return this.#bytes;
  }

  #keep(agent: string, old: KeptPage | undefined, page: KeptPage): void {
    if (old !== undefined) {
      this.#pages.delete(agent);
      this.#bytes -= old.bytes.length;
    }
    if (page.bytes.length > this.#largestPage) return;
    if (this.#bytes + page.bytes.length > this.#totalBytes) {
      this.#pages.clear();
      this.#bytes = 0;
    }
    this.#pages.set(agent, page);
    this.#bytes += page.bytes.length;
  }
}
