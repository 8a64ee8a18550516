/**
 * How one attempt went: sent, or failed — `retryable` (a 5xx, a 429, the network) with the wait
 * the receiver asked for, or not (a 4xx, a redirect, a missing secret), which ends the delivery.
 */
export type AttemptOutcome =
  | { ok: true; statusCode?: number }
  | {
      ok: false;
      error: string;
      retryable: boolean;
      statusCode?: number;
      retryAfter?: string | null;
      /** The error ends with a piece of the receiver's answer, cut: a secret there may be cut in two. */
      cutAtEnd?: boolean;
      /**
       * An email the server took for some recipients and refused for a while for the others: the
       * addresses still to reach. A retry sends to these alone, so nobody gets the mail twice.
       */
      remainingRecipients?: string[];
      /**
       * An email some of whose recipients the server refused for good while others wait for a
       * retry: those addresses, never tried again; the delivery ends failed naming them.
       */
      refusedForGood?: string[];
    };

/** A failure no retry can fix. */
export function permanentFailure(error: string, statusCode?: number): AttemptOutcome {
  return { ok: false, error, retryable: false, ...(statusCode === undefined ? {} : { statusCode }) };
}
