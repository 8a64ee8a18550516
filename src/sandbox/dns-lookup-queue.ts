import dns from "node:dns";

/**
 * dns.lookup runs getaddrinfo on libuv's thread pool (4 threads), which the daemon's file reads and
 * writes share. A sandbox may ask its proxy for as many names as its host list allows, some slow to
 * answer: at most this many lookups of all proxies run at once, so threads stay free for the rest.
 */
const MAX_RUNNING = 2;
/** Lookups one proxy may have waiting; one more fails at once (EAI_AGAIN). */
const MAX_WAITING = 64;

/** What dns.lookup with `all: true` calls back with. */
export type LookupCallback = (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void;

/** Queues with lookups waiting, in turn order: the first gets the next free turn, then goes last. */
const turns = new Set<DnsLookupQueue>();
let running = 0;

/**
 * One proxy's host name lookups. They share the few running turns with every other proxy's in
 * rotation, so one sandbox asking for many slow names delays its own lookups, not the others'.
 */
export class DnsLookupQueue {
  readonly #waiting: Array<() => void> = [];

  /** dns.lookup with `all: true`, once this queue's turn comes. Never throws. */
  lookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
    if (this.#waiting.length >= MAX_WAITING) {
      const busy = Object.assign(new Error(`too many host name lookups at once (${hostname})`), {
        code: "EAI_AGAIN",
      });
      process.nextTick(() => callback(busy, []));
      return;
    }
    this.#waiting.push(() =>
      lookupAll(hostname, options, (error, addresses) => {
        running -= 1;
        startNext();
        callback(error, addresses);
      }),
    );
    turns.add(this);
    startNext();
  }

  /** The next lookup of this queue, and whether more wait after it. */
  take(): { start: (() => void) | undefined; more: boolean } {
    const start = this.#waiting.shift();
    return { start, more: this.#waiting.length > 0 };
  }
}

function startNext(): void {
  for (const queue of turns) {
    if (running >= MAX_RUNNING) return;
    turns.delete(queue);
    const { start, more } = queue.take();
    if (more) turns.add(queue);
    if (start) {
      running += 1;
      start();
    }
  }
}

/**
 * dns.lookup with `all: true`, its synchronous throws (a name or option it refuses) made a failure.
 * A name with a byte outside printable ASCII fails too: getaddrinfo stops at a NUL, so
 * `evil.test\0.allowed.example` would resolve evil.test.
 */
export function lookupAll(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  if (/[^\x21-\x7e]/.test(hostname)) {
    const refused = Object.assign(new Error(`${JSON.stringify(hostname)} is not a host name`), {
      code: "ENOTFOUND",
    });
    process.nextTick(() => callback(refused, []));
    return;
  }
  try {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => callback(error, addresses ?? []));
  } catch (error) {
    const failure = Object.assign(error instanceof Error ? error : new Error(String(error)), {
      code: "ENOTFOUND",
    });
    process.nextTick(() => callback(failure, []));
  }
}
