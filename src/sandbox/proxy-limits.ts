/**
 * What one sandbox's network proxy takes from its client and its upstreams. The proxy runs inside
 * the daemon and its client may be hostile: every number here bounds what one sandbox can make the
 * daemon hold (sockets, memory, time), never more than that sandbox's own traffic.
 */
export interface ProxyLimits {
  /** Client connections open at once (CONNECT tunnels included); more are closed on arrival. */
  maxConnections: number;
  /** Upstream connections open at once (forwarded requests and tunnels); more get `503`. */
  maxUpstreams: number;
  /** Bytes of a request's or a response's head (request/status line and headers): `431` / `502` beyond. */
  maxHeaderBytes: number;
  /** Headers of a request or response; the ones past it are dropped (node's `maxHeadersCount`). */
  maxHeadersCount: number;
  /** Milliseconds for a client to send a whole request head: `408` after it. */
  headersTimeoutMilliseconds: number;
  /** Milliseconds for a client to send a whole request, body included: `408` after it. */
  requestTimeoutMilliseconds: number;
  /** Milliseconds an idle keep-alive client connection stays open between requests. */
  keepAliveTimeoutMilliseconds: number;
  /** Milliseconds to reach an upstream (DNS and TCP connect): `504` after it. */
  connectTimeoutMilliseconds: number;
  /** Milliseconds a client connection, an upstream or a tunnel may carry no data before it is closed. */
  idleTimeoutMilliseconds: number;
  /** How often node checks the header and request timeouts (they fire up to this much late). */
  timeoutCheckMilliseconds: number;
}

/** The limits every sandbox's proxy runs with (see docs/sandbox.md). */
export const DEFAULT_PROXY_LIMITS: Readonly<ProxyLimits> = Object.freeze({
  maxConnections: 64,
  maxUpstreams: 64,
  maxHeaderBytes: 16 * 1024,
  maxHeadersCount: 100,
  headersTimeoutMilliseconds: 10_000,
  requestTimeoutMilliseconds: 300_000,
  keepAliveTimeoutMilliseconds: 5_000,
  connectTimeoutMilliseconds: 30_000,
  idleTimeoutMilliseconds: 600_000,
  timeoutCheckMilliseconds: 1_000,
});
