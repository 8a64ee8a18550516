import type http from "node:http";
import net from "node:net";
import { pipeline } from "node:stream";
import { matchHostRule } from "../config/host-rules.js";
import type { ProxyContext } from "./proxy-context.js";
import { guardedLookup, hostRefusal, isAddressRefusal } from "./proxy-host-check.js";
import { endWithRawReply } from "./proxy-raw-reply.js";
import { connectTarget } from "./proxy-target.js";

/**
 * Answers `CONNECT host:port`: `400` for a malformed target or a CONNECT with a body, `403` for a
 * host the rules do not list or a name that resolves to an internal address, `503` when every upstream slot is taken, `502`/`504` when the
 * upstream cannot be reached; else `200` and a byte tunnel, closed when either side has been idle
 * for `idleTimeoutMilliseconds`. Whatever happens ends this client's socket only.
 */
export function openTunnel(
  context: ProxyContext,
  request: http.IncomingMessage,
  client: net.Socket,
  head: Buffer,
): void {
  const { limits } = context;
  client.on("error", () => client.destroy());
  client.setTimeout(limits.idleTimeoutMilliseconds);
  client.on("timeout", () => client.destroy());
  const target = connectTarget(request.url ?? "");
  if ("malformed" in target) return endWithRawReply(client, 400, target.malformed);
  const length = request.headers["content-length"];
  if (request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0")) {
    return endWithRawReply(client, 400, "a CONNECT request has no body");
  }
  const refusal = hostRefusal(context.rules, target.host, target.port);
  if (refusal !== undefined) return endWithRawReply(client, 403, refusal);
  const releaseSlot = context.takeUpstreamSlot();
  if (releaseSlot === undefined) {
    return endWithRawReply(client, 503, `more than ${limits.maxUpstreams} upstream connections at once`);
  }
  let upstream: net.Socket;
  try {
    upstream = net.connect({
      host: target.host,
      port: target.port,
      lookup: guardedLookup(matchHostRule(context.rules, target.host, target.port), context.guard),
      timeout: limits.connectTimeoutMilliseconds,
    });
  } catch (error) {
    releaseSlot();
    return endWithRawReply(client, 400, `cannot connect to ${target.authority}: ${messageOf(error)}`);
  }
  context.track(upstream);
  let established = false;
  upstream.once("close", releaseSlot);
  client.once("close", () => upstream.destroy());
  upstream.on("timeout", () => {
    if (established) upstream.destroy();
    else endWithRawReply(client, 504, `${target.authority} did not answer in time`);
    upstream.destroy();
  });
  upstream.on("error", (error) => {
    if (established) client.destroy();
    else if (isAddressRefusal(error)) endWithRawReply(client, 403, error.message);
    else endWithRawReply(client, 502, `cannot reach ${target.authority}: ${error.message}`);
  });
  upstream.once("connect", () => {
    if (client.destroyed) return upstream.destroy();
    established = true;
    upstream.setTimeout(limits.idleTimeoutMilliseconds);
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    const both = (error: Error | null | undefined) => {
      if (error) {
        client.destroy();
        upstream.destroy();
      }
    };
    pipeline(upstream, client, both);
    pipeline(client, upstream, both);
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
