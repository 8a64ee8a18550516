import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.js";
import { type HeldConnection, type ProxyUnderTest, startProxyUnderTest } from "./proxy-under-test.js";
import { GOOD_BODY, type RawUpstream, startRawUpstream } from "./raw-upstream.js";

// The built proxy (dist/) in child processes: `npm run build` first. One runs with timeouts short
// enough to watch them fire, the other with long ones and small connection caps to fill.
let upstream: RawUpstream;
let quick: ProxyUnderTest;
let small: ProxyUnderTest;
let authority: string;
/** The quick proxy's sockets with no connection open: its listener and its standard streams. */
let quickAtRest: number;

beforeAll(async () => {
  // `/case/0`: an upstream that reads the request and never answers; `/case/1`: 2 MiB at once.
  const large = 2 * 1024 * 1024;
  upstream = await startRawUpstream([
    { bytes: Buffer.alloc(0), then: "stall" },
    {
      bytes: Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${large}\r\n\r\n${"x".repeat(large)}`),
      then: "end",
    },
  ]);
  authority = `127.0.0.1:${upstream.port}`;
  [quick, small] = await Promise.all([
    startProxyUnderTest(["127.0.0.1"], {
      headersTimeoutMilliseconds: 500,
      requestTimeoutMilliseconds: 1_000,
      keepAliveTimeoutMilliseconds: 300,
      idleTimeoutMilliseconds: 800,
      timeoutCheckMilliseconds: 100,
    }),
    startProxyUnderTest(["127.0.0.1"], { maxConnections: 6, maxUpstreams: 3 }),
  ]);
  quickAtRest = quick.openSockets();
});
afterAll(async () => {
  await Promise.all([quick.stop(), small.stop()]);
  await upstream.close();
});

const get = (extra = "") => `GET http://${authority}/good HTTP/1.1\r\nHost: ${authority}\r\n${extra}\r\n`;
const connect = () => `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`;

/** Resolves true once `connection` is closed, false if it is still open after `milliseconds`. */
async function closesWithin(connection: HeldConnection, milliseconds: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), milliseconds)));
  const closed = await Promise.race([connection.closed.then(() => true), late]);
  clearTimeout(timer);
  return closed;
}

async function expectServing(proxy: ProxyUnderTest): Promise<void> {
  expect(proxy.alive(), proxy.stderr()).toBe(true);
  const { reply } = await proxy.exchange([Buffer.from(get("Connection: close\r\n"))]);
  expect(reply).toContain(GOOD_BODY);
}

describe("the network proxy's timeouts", () => {
  it("answers 408 to a head sent a byte at a time (slowloris) and closes", async () => {
    const connection = await quick.connect();
    const head = get();
    let sent = 0;
    // The stimulus, not a wait: one byte every 50 ms, far slower than the 500 ms head timeout allows.
    const trickle = setInterval(() => connection.write(head[sent++ % head.length] ?? ""), 50);
    try {
      expect(await closesWithin(connection, 4_000)).toBe(true);
    } finally {
      clearInterval(trickle);
    }
    expect(connection.received()).toMatch(/^HTTP\/1\.1 408 /);
    await expectServing(quick);
  });

  it("closes a connection whose request body never ends", async () => {
    const connection = await quick.connect();
    connection.write(
      `POST http://${authority}/good HTTP/1.1\r\nHost: ${authority}\r\nContent-Length: 1000\r\n\r\nonly this`,
    );
    expect(await closesWithin(connection, 4_000)).toBe(true);
    await expectServing(quick);
  });

  it("closes a tunnel that carries nothing, and a keep-alive connection left idle", async () => {
    const tunnel = await quick.connect();
    tunnel.write(connect());
    await tunnel.receive(/^HTTP\/1\.1 200 /);
    const idle = await quick.connect();
    idle.write(get());
    await idle.receive(new RegExp(GOOD_BODY));
    const [tunnelClosed, idleClosed] = await Promise.all([
      closesWithin(tunnel, 4_000),
      closesWithin(idle, 4_000),
    ]);
    expect({ tunnelClosed, idleClosed }).toEqual({ tunnelClosed: true, idleClosed: true });
    await expectServing(quick);
  });

  it("answers 502 when an upstream accepts and never answers", async () => {
    const connection = await quick.connect();
    connection.write(`GET http://${authority}/case/0 HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
    expect(await closesWithin(connection, 4_000)).toBe(true);
    expect(connection.received()).toMatch(/^HTTP\/1\.1 502 /);
    upstream.dropConnections();
    await expectServing(quick);
  });
});

it("closes the connection of a client that does not read its answer", async () => {
  // Counted against the proxy at rest: earlier cases' connections may still be closing.
  await waitFor(() => quick.openSockets() === quickAtRest, "earlier connections to end", 10_000);
  const asked = upstream.targets().length;
  const socket = net.connect(quick.socketPath);
  socket.on("error", () => undefined);
  // Paused, the client reads nothing, and would not notice the close either: the proxy's own
  // sockets tell.
  socket.pause();
  socket.write(`GET http://${authority}/case/1 HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  try {
    await waitFor(
      () => upstream.targets().slice(asked).includes("/case/1"),
      "the proxy to forward the request",
      10_000,
    );
    await waitFor(() => quick.openSockets() === quickAtRest, "the proxy to close both sockets", 5_000);
  } finally {
    socket.destroy();
  }
  await expectServing(quick);
});

describe("the network proxy's caps", () => {
  it("closes connections past maxConnections, and serves again once some end", async () => {
    const held: HeldConnection[] = [];
    for (let index = 0; index < 6; index += 1) {
      const connection = await small.connect();
      connection.write(get());
      await connection.receive(new RegExp(GOOD_BODY));
      held.push(connection);
    }
    const refused = await small.exchange([Buffer.from(get("Connection: close\r\n"))], { keepOpen: true });
    expect(refused).toEqual({ reply: "", closed: true });
    held.shift()?.destroy();
    await waitFor(
      async () =>
        (await small.exchange([Buffer.from(get("Connection: close\r\n"))])).reply.includes(GOOD_BODY),
      "a good request to be served again",
    );
    for (const connection of held) connection.destroy();
  });

  it("answers 503 past maxUpstreams, to CONNECT and to forwarded requests alike", async () => {
    const tunnels: HeldConnection[] = [];
    for (let index = 0; index < 3; index += 1) {
      const tunnel = await small.connect();
      tunnel.write(connect());
      await tunnel.receive(/^HTTP\/1\.1 200 /);
      tunnels.push(tunnel);
    }
    const forwarded = await small.exchange([Buffer.from(get("Connection: close\r\n"))]);
    expect(forwarded.reply).toMatch(/^HTTP\/1\.1 503 /);
    const tunnelled = await small.exchange([Buffer.from(connect())]);
    expect(tunnelled.reply).toMatch(/^HTTP\/1\.1 503 /);
    for (const tunnel of tunnels) tunnel.destroy();
    await waitFor(
      async () =>
        (await small.exchange([Buffer.from(get("Connection: close\r\n"))])).reply.includes(GOOD_BODY),
      "an upstream slot to be free again",
    );
    expect(small.alive()).toBe(true);
  });
});
