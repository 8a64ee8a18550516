import dns from "node:dns";
import http from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import { type HostRule, isLoopbackHost, matchHostRule } from "./host-rules.js";

/** A running proxy: close it when the child is gone. */
export interface NetworkProxy {
  close(): Promise<void>;
}

/** Why a host:port is refused, or undefined when `rules` let it through. */
export function hostRefusal(rules: readonly HostRule[], host: string, port: number): string | undefined {
  const rule = matchHostRule(rules, host, port);
  if (rule === undefined) return `${host}:${port} is not in the sandbox's network list`;
  return undefined;
}

/**
 * Resolves like dns.lookup, but refuses a name that resolves to loopback unless the rule that let
 * it through names a loopback host itself: an allowed name must not lead to the daemon's API.
 */
export function guardedLookup(rule: HostRule | undefined): net.LookupFunction {
  const loopbackAllowed = rule !== undefined && isLoopbackHost(rule.host);
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 0);
      const refused = !loopbackAllowed && addresses.some((entry) => isLoopbackHost(entry.address));
      if (refused) {
        const failure = Object.assign(new Error(`${hostname} resolves to a loopback address`), {
          code: "EACCES",
        });
        return callback(failure, "", 0);
      }
      if (options.all)
        return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
      callback(null, first.address, first.family);
    });
  };
}

/**
 * An HTTP proxy (absolute-URI requests and CONNECT tunnels) listening on a unix socket that is
 * bound into one sandbox, whose network namespace has no other way out. Every request's host and
 * port are checked against `rules`; a refusal is a 403 whose body says why.
 */
export async function startNetworkProxy(
  socketPath: string,
  rules: readonly HostRule[],
): Promise<NetworkProxy> {
  const sockets = new Set<Duplex>();
  const server = http.createServer((request, response) => {
    let target: URL;
    try {
      target = new URL(request.url ?? "");
    } catch {
      response
        .writeHead(400, { "content-type": "text/plain" })
        .end("this proxy takes absolute http:// URLs\n");
      return;
    }
    if (target.protocol !== "http:") {
      response.writeHead(400, { "content-type": "text/plain" }).end("use CONNECT for https\n");
      return;
    }
    const port = Number(target.port || 80);
    const refusal = hostRefusal(rules, target.hostname, port);
    if (refusal !== undefined) {
      response.writeHead(403, { "content-type": "text/plain" }).end(`agentd sandbox: ${refusal}\n`);
      return;
    }
    const headers = { ...request.headers };
    delete headers["proxy-authorization"];
    delete headers["proxy-connection"];
    const upstream = http.request(
      {
        host: target.hostname,
        port,
        path: `${target.pathname}${target.search}`,
        method: request.method,
        headers,
        lookup: guardedLookup(matchHostRule(rules, target.hostname, port)),
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on("error", (error) => {
      if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" });
      response.end(`agentd sandbox proxy: ${error.message}\n`);
    });
    request.pipe(upstream);
  });
  server.on("connect", (request: http.IncomingMessage, client: Duplex, head: Buffer) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    const { host, port } = splitAuthority(request.url ?? "");
    const refusal = host === undefined ? "a CONNECT needs host:port" : hostRefusal(rules, host, port);
    if (host === undefined || refusal !== undefined) {
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nagentd sandbox: ${refusal}\n`);
      return;
    }
    const upstream = net.connect({ host, port, lookup: guardedLookup(matchHostRule(rules, host, port)) });
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.once("connect", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", (error) => {
      if (client.writable && upstream.connecting) {
        client.end(
          `HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\r\nagentd sandbox proxy: ${error.message}\n`,
        );
      } else client.destroy();
    });
    client.on("close", () => upstream.destroy());
  });
  server.on("clientError", (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `host:port` or `[v6]:port` of a CONNECT request. */
function splitAuthority(authority: string): { host: string | undefined; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(authority);
  if (!match?.[1]) return { host: undefined, port: 0 };
  return { host: match[1].replace(/^\[(.*)\]$/, "$1"), port: Number(match[2]) };
}
