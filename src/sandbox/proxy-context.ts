import type { Duplex } from "node:stream";
import { DnsLookupQueue } from "./dns-lookup-queue.js";
import type { HostRule } from "../config/host-rules.js";
import type { ProxyLimits } from "./proxy-limits.js";
import type { LookupGuard } from "./proxy-host-check.js";

/** What a proxy lets through besides its host list. */
export interface ProxyOptions {
  /** Config `sandbox.private_addresses: allow`: allowed names may resolve to internal (not loopback) addresses. */
  privateAddresses?: boolean | undefined;
}

/** What the handlers of one proxy share: its rules, its limits, and the sockets it holds. */
export class ProxyContext {
  /** This proxy's host name lookups (see {@link DnsLookupQueue}). */
  readonly lookups = new DnsLookupQueue();
  /** How this proxy's upstream names are resolved and checked (see `guardedLookup`). */
  readonly guard: LookupGuard;
  readonly #sockets = new Set<Duplex>();
  #upstreams = 0;

  constructor(
    readonly rules: readonly HostRule[],
    readonly limits: Readonly<ProxyLimits>,
    options: ProxyOptions = {},
  ) {
    this.guard = { queue: this.lookups, privateAddresses: options.privateAddresses };
  }

  /** Keeps `socket` until it closes, so that closing the proxy ends it. */
  track(socket: Duplex): void {
    this.#sockets.add(socket);
    socket.once("close", () => this.#sockets.delete(socket));
  }

  /**
   * Takes one of `maxUpstreams` slots for a new upstream connection: a function that gives it back
   * (once, however often it is called), or undefined when none is free.
   */
  takeUpstreamSlot(): (() => void) | undefined {
    if (this.#upstreams >= this.limits.maxUpstreams) return undefined;
    this.#upstreams += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#upstreams -= 1;
    };
  }

  /** Ends every socket still open. */
  destroyAll(): void {
    for (const socket of this.#sockets) socket.destroy();
  }
}
