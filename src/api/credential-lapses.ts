import { type CredentialSources, type Principal, stillAuthenticated } from "./api-auth.js";

/** Something a request holds open: a long poll waiting. */
interface Held {
  readonly principal: Principal | undefined;
  end(): void;
}

/**
 * What requests hold open past their start (long polls waiting), each ended at once when its
 * credentials stop counting: its token revoked, its browser session logged out or expired. It
 * listens to the tokens and the sessions from its creation until `close`. With `server.auth: none`
 * nothing lapses, and nothing is held.
 */
export class CredentialLapses {
  readonly #sources: CredentialSources;
  readonly #held = new Set<Held>();
  readonly #stopListening: Array<() => void>;

  constructor(sources: CredentialSources) {
    this.#sources = sources;
    const check = () => this.#endLapsed();
    this.#stopListening =
      sources.tokens === undefined ? [] : [sources.tokens.onChange(check), sources.sessions.onEnd(check)];
  }

  /** Ends `end` when the principal's credentials lapse; answers the function that stops watching. */
  hold(principal: Principal | undefined, end: () => void): () => void {
    if (this.#sources.tokens === undefined) return NOTHING_HELD;
    const held: Held = { principal, end };
    this.#held.add(held);
    return () => this.#held.delete(held);
  }

  /** Stops listening to the tokens and the sessions. */
  close(): void {
    for (const stop of this.#stopListening) stop();
  }

  #endLapsed(): void {
    for (const held of [...this.#held]) {
      if (stillAuthenticated(held.principal, this.#sources)) continue;
      this.#held.delete(held);
      held.end();
    }
  }
}

const NOTHING_HELD = (): void => undefined;
