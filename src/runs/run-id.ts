import { randomBytes } from "node:crypto";

/** A function returning a fresh run id. Injected so tests can predict ids when they need to. */
export type RunIdSource = () => string;

const TIME_WIDTH = 9;
const SEQUENCE_WIDTH = 4;
const RANDOM_BYTES = 5;
/** Ids whose random bytes are drawn at once: a draw per id was a system call per new run. */
const IDS_PER_DRAW = 64;

/**
 * Run ids are `r_` + base-36 milliseconds (9 chars, sortable until the year 5188) + a sequence that
 * keeps ids from the same millisecond in creation order + random characters, so two daemons sharing
 * nothing still never collide: `r_mf3k2p1xa0000k3j9x2q`. Lexical order is creation order.
 */
export function createRunIdSource(now: () => Date = () => new Date()): RunIdSource {
  let lastTime = -1;
  let sequence = 0;
  let random = Buffer.alloc(0);
  let offset = 0;
  return () => {
    const time = Math.max(now().getTime(), lastTime);
    sequence = time === lastTime ? sequence + 1 : 0;
    lastTime = time;
    if (offset === random.length) {
      random = randomBytes(RANDOM_BYTES * IDS_PER_DRAW);
      offset = 0;
    }
    const suffix = random.readUIntBE(offset, RANDOM_BYTES).toString(36).padStart(8, "0").slice(-8);
    offset += RANDOM_BYTES;
    return `r_${time.toString(36).padStart(TIME_WIDTH, "0")}${sequence.toString(36).padStart(SEQUENCE_WIDTH, "0")}${suffix}`;
  };
}
