/**
 * The least time a server gets to start and list its tools: `npx -y <server>` may first download
 * it. `tools.http_timeout` limits the calls.
 */
export const MIN_START_MILLISECONDS = 60_000;
