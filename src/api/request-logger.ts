import type { FastifyBaseLogger } from "fastify";

/** The binding fastify gives each request's child logger (its `requestIdLogLabel`, by default). */
const REQUEST_ID_LABEL = "reqId";

/**
 * The logger fastify is given: its children for requests are itself, so requests share it, while
 * any other child (fastify's own, with its serializers; one with a level or serializers of its
 * own) is a real child, shared in turn. A child per request costs more than a poll itself; a
 * `childLoggerFactory` returning the logger would avoid it too, but fastify checks the logger such
 * a factory returns on every request (seven method lookups, two arrays and a closure), which it
 * skips for its default factory, the one this logger's `child` answers.
 */
export function requestSharedLogger(logger: FastifyBaseLogger): FastifyBaseLogger {
  const shared = Object.create(logger) as FastifyBaseLogger;
  shared.child = (bindings, options) => {
    if (isRequestChild(bindings, options)) return shared;
    return requestSharedLogger(logger.child(bindings, options));
  };
  return shared;
}

/** A request's child: the request id alone, no level nor serializers of its own. */
function isRequestChild(
  bindings: Parameters<FastifyBaseLogger["child"]>[0],
  options: Parameters<FastifyBaseLogger["child"]>[1],
): boolean {
  if (options !== undefined && (options.level !== undefined || options.serializers !== undefined)) {
    return false;
  }
  let keys = 0;
  for (const key in bindings) {
    if (key !== REQUEST_ID_LABEL) return false;
    keys++;
  }
  return keys === 1;
}
