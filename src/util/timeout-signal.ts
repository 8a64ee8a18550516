/**
 * A signal that aborts with a `TimeoutError` after `milliseconds`, as `AbortSignal.timeout` does,
 * but held by its own timer until it fires. Node 20's `AbortSignal.timeout` keeps only a weak
 * reference to its signal, and `AbortSignal.any` holds its sources weakly too: a deadline merged
 * with `AbortSignal.any` and referenced nowhere else can be garbage-collected and never fire (a
 * shell call then outlived its timeout once a collection ran). Use this for every deadline. The
 * timer does not keep the process alive.
 */
export function timeoutSignal(milliseconds: number): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
  }, milliseconds);
  timer.unref();
  return controller.signal;
}
