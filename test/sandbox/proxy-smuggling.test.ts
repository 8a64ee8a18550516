import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProxyUnderTest, startProxyUnderTest } from "./proxy-under-test.js";

// The built proxy (dist/) in a child process (`npm run build` first), allowed one loopback
// host:port: a node server that records every request it parses. Whatever framing trick a sandboxed
// client plays, the upstream must see each allowed request once, re-framed, and never a second
// request hidden in a body, nor anything at a host:port the list does not name.
let upstream: http.Server;
let proxy: ProxyUnderTest;
let authority: string;
let port: number;
const seen: string[] = [];
/** The Host header of each request the upstream saw. */
const hosts: string[] = [];

beforeAll(async () => {
  upstream = http.createServer((request, response) => {
    let body = "";
    request.setEncoding("latin1");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      seen.push(`${request.method} ${request.url} ${JSON.stringify(body)}`);
      hosts.push(request.headers.host ?? "");
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  port = (upstream.address() as AddressInfo).port;
  authority = `127.0.0.1:${port}`;
  proxy = await startProxyUnderTest([authority], { idleTimeoutMilliseconds: 2_000 });
});
afterAll(async () => {
  await proxy.stop();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

/** The statuses the proxy answered on one connection, in order, and what the upstream saw meanwhile. */
async function send(text: string): Promise<{ statuses: number[]; seen: string[] }> {
  const before = seen.length;
  const { reply } = await proxy.exchange([Buffer.from(text, "latin1")], { waitMilliseconds: 5_000 });
  const statuses = [...reply.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
  return { statuses, seen: seen.slice(before) };
}

const post = (headers: string, body: string) =>
  `POST http://${authority}/p HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n${headers}\r\n${body}`;
const hidden = () => `GET http://${authority}/hidden HTTP/1.1\r\nHost: x\r\n\r\n`;

describe("request smuggling through the sandbox's proxy", { timeout: 60_000 }, () => {
  it.each([
    ["upper case", "Transfer-Encoding: CHUNKED\r\n"],
    ["a tab before the value", "Transfer-Encoding:\tchunked\r\n"],
    ["a space after the value", "Transfer-Encoding: chunked \r\n"],
    ["identity, chunked", "Transfer-Encoding: identity, chunked\r\n"],
  ])("reads a chunked body with transfer-encoding in %s as chunked, once", async (_name, header) => {
    const answer = await send(post(header, "5\r\nhello\r\n0\r\n\r\n"));
    expect(answer.statuses).toEqual([200]);
    expect(answer.seen).toEqual(['POST /p "hello"']);
  });

  it.each([
    ["content-length and chunked", `Content-Length: 0\r\nTransfer-Encoding: chunked\r\n`],
    ["chunked, identity", "Transfer-Encoding: chunked, identity\r\n"],
    ["a folded transfer-encoding", "Transfer-Encoding: x\r\n chunked\r\n"],
    ["a vertical tab", "Transfer-Encoding: \x0bchunked\r\n"],
    ["two content-lengths", "Content-Length: 0\r\nContent-Length: 45\r\n"],
    ["a signed content-length", "Content-Length: +0\r\n"],
  ])("refuses %s with a 400 and forwards nothing", async (_name, headers) => {
    const answer = await send(post(headers, `0\r\n\r\n${hidden()}`));
    expect(answer.statuses).toEqual([400]);
    expect(answer.seen).toEqual([]);
  });

  it.each([
    ["a bare LF", `GET http://${authority}/a HTTP/1.1\r\nHost: x\nX-Next: ${hidden()}`],
    ["a bare CR", `GET http://${authority}/a HTTP/1.1\rHost: x\r\n\r\n`],
    ["a NUL in the target", `GET http://${authority}/a\x00b HTTP/1.1\r\nHost: x\r\n\r\n`],
  ])("refuses a head with %s", async (_name, text) => {
    const answer = await send(text);
    expect(answer.statuses).toEqual([400]);
    expect(answer.seen).toEqual([]);
  });
});

describe("where a request goes", { timeout: 60_000 }, () => {
  it("goes where its absolute URL says, whatever its Host headers say, with the Host set to match", async () => {
    const answer = await send(
      `GET http://${authority}/h HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`,
    );
    expect(answer.statuses).toEqual([200]);
    expect(answer.seen).toEqual(['GET /h ""']);
    expect(hosts.at(-1)).toBe(authority);
  });

  it("checks every request of a kept-alive connection on its own", async () => {
    const answer = await send(
      `GET http://${authority}/first HTTP/1.1\r\nHost: x\r\n\r\n` +
        `GET http://127.0.0.2:${port}/second HTTP/1.1\r\nHost: ${authority}\r\n\r\n` +
        `GET /third HTTP/1.1\r\nHost: ${authority}\r\n\r\n`,
    );
    expect(answer.statuses).toEqual([200, 403]);
    expect(answer.seen).toEqual(['GET /first ""']);
  });

  // `{host}` is the listed host:port, `{port}` its port: both known once the upstream listens.
  const filled = (text: string) => text.replaceAll("{host}", authority).replaceAll("{port}", String(port));

  it.each([
    ["http://{host}@evil.example/", 403],
    ["http://evil.example\\@{host}/", 400],
    ["http://evil.example#@{host}/", 400],
    ["http://[::ffff:127.0.0.1]:{port}/", 403],
    ["http://127.0.0.1\t:{port}/", 400],
  ])("reads the host of %s as the host it connects to (%i)", async (url, status) => {
    const answer = await send(`GET ${filled(url)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(answer.statuses).toEqual([status]);
    expect(answer.seen).toEqual([]);
  });

  it.each([
    "0177.0.0.1:{port}",
    "2130706433:{port}",
    "127.1:{port}",
    "0x7f.0.0.1:{port}",
    "[::ffff:127.0.0.1]:{port}",
    "[fe80::1%eth0]:{port}",
    "0.0.0.0:{port}",
    "127.0.0.2:{port}",
  ])("refuses CONNECT %s, another spelling of a loopback address than the one listed", async (target) => {
    const answer = await send(`CONNECT ${filled(target)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(answer.statuses).toEqual([403]);
  });

  it("names a refused IPv6 target as a host-list entry writes it, between brackets", async () => {
    const { reply } = await proxy.exchange([
      Buffer.from(`CONNECT [::ffff:127.0.0.1]:${port} HTTP/1.1\r\nHost: x\r\n\r\n`),
    ]);
    expect(reply).toContain(`[::ffff:127.0.0.1]:${port} is not in the sandbox's network list`);
  });
});
