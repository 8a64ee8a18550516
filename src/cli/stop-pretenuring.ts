import { setFlagsFromString } from "node:v8";
import { writeCodeCacheNow } from "./code-cache.js";

/**
 * Turns off V8's allocation-site pretenuring for the rest of the daemon's life. V8 watches each
 * place in the code that builds objects, and once nearly all of a burst of them outlive a young
 * collection, it builds that place's objects in the old generation from then on, for good. A
 * daemon's connections make such places: keep-alive pollers hold their sockets for minutes, so the
 * places in Node's `net` and `http` that build a connection's objects (a socket's listener table,
 * among others) are judged long-lived; every later short connection (an SSE replay, a CLI call)
 * then has them born old, where they die, and while dead they keep the young objects they point
 * to (listeners, the request and the response) alive through the young collections, which copy and
 * promote them. After the api-poll bench's poll phases that made an SSE replay cost the daemon's
 * process about a third more CPU than before them (docs/benchmarks.md, `api-poll`). The start has
 * pretenured what it loads by then; from here, objects are born young and promoted by age alone.
 *
 * A V8 flag changed at run time changes the hash a code cache is checked against: a cache written
 * after it would be refused by the next start, which reads it before the flag is set. The caches
 * still to be written are written first.
 */
export function stopPretenuring(): void {
  writeCodeCacheNow();
  setFlagsFromString("--no-allocation-site-pretenuring");
}
