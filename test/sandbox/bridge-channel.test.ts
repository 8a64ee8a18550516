import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type BridgeChannel, startBridgeChannel } from "../../src/sandbox/bridge-channel.js";

/** Everything a test started, ended after it. */
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** Two connected unix sockets: the two ends of a channel (a child's stdio pipe is a socketpair). */
async function socketPair(): Promise<[net.Socket, net.Socket]> {
  const folder = mkdtempSync(path.join(os.tmpdir(), "agentd-channel-test-"));
  const server = net.createServer().listen(path.join(folder, "pair.sock"));
  await once(server, "listening");
  const accepted = once(server, "connection") as Promise<[net.Socket]>;
  const client = net.connect(path.join(folder, "pair.sock"));
  const [other] = await accepted;
  server.close();
  rmSync(folder, { recursive: true, force: true });
  cleanups.push(() => {
    client.destroy();
    other.destroy();
  });
  return [client, other];
}

/** A TCP server on loopback; `handler` gets each connection. */
async function tcpServer(handler: (socket: net.Socket) => void): Promise<number> {
  const server = net.createServer({ allowHalfOpen: true }, handler).listen(0, "127.0.0.1");
  await once(server, "listening");
  cleanups.push(() => server.close());
  return (server.address() as net.AddressInfo).port;
}

/**
 * A bridge as in the sandbox: connections to the returned port travel over a channel to the
 * daemon's end, which connects each to `targetPort`. `faults` collects the daemon's end's faults.
 */
async function bridge(targetPort: number) {
  const [inside, outside] = await socketPair();
  const faults: string[] = [];
  const daemonEnd = startBridgeChannel(outside, {
    accept: () => net.connect({ port: targetPort, host: "127.0.0.1", allowHalfOpen: true }),
    onFault: (reason) => faults.push(reason),
  });
  const sandboxEnd = startBridgeChannel(inside, {});
  const port = await tcpServer((client) => sandboxEnd.open(client));
  cleanups.push(() => {
    daemonEnd.close();
    sandboxEnd.close();
  });
  return { port, faults, daemonEnd, sandboxEnd, outside };
}

/** Connects, sends `request`, half-closes, and collects the answer until the far side ends. */
async function exchange(port: number, request: Buffer | string): Promise<Buffer> {
  const socket = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  socket.end(request);
  await once(socket, "end");
  socket.destroy();
  return Buffer.concat(chunks);
}

const echo = (socket: net.Socket) => {
  socket.pipe(socket);
  socket.on("error", () => socket.destroy());
};
const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

describe("a bridge channel", () => {
  it("carries many connections at once, each with its own bytes, both ways, half-closes included", async () => {
    const { port } = await bridge(await tcpServer(echo));
    const requests = Array.from({ length: 40 }, (_, index) => randomBytes(1_000 + index * 5_000));
    const answers = await Promise.all(requests.map((request) => exchange(port, request)));
    answers.forEach((answer, index) => {
      const request = requests[index] as Buffer;
      expect(answer.length).toBe(request.length);
      let first = 0;
      while (first < answer.length && answer[first] === request[first]) first += 1;
      expect(first).toBe(request.length);
    });
  });

  it("carries a large download whole, and a stalled reader stalls only its own stream", async () => {
    const payload = randomBytes(48 * 1024 * 1024);
    let written = 0;
    let blocked = false;
    const { port } = await bridge(
      await tcpServer((socket) => {
        socket.on("error", () => socket.destroy());
        socket.once("data", (request: Buffer) => {
          if (request.toString() === "small") return void socket.end("small-answer");
          const step = 64 * 1024;
          const writeMore = () => {
            blocked = false;
            while (written < payload.length) {
              const ok = socket.write(payload.subarray(written, written + step));
              written += step;
              if (!ok) {
                blocked = true;
                return void socket.once("drain", writeMore);
              }
            }
            socket.end();
          };
          writeMore();
        });
      }),
    );
    // A reader that takes nothing: the source must be held back, not read whole into the daemon.
    const stalled = net.connect({ port, host: "127.0.0.1" });
    stalled.pause();
    stalled.write("big");
    // Held: the source's writes stay refused from one look to the next (the buffers on the way full).
    let previous = -1;
    const held = () => {
      const unchanged = blocked && written === previous;
      previous = written;
      return unchanged;
    };
    await expect.poll(held, { timeout: 30_000, interval: 200 }).toBe(true);
    // Another stream still flows while the first one is stalled, and the source stays held: by
    // the socket buffers on the way and a window, not 48 MiB read into the daemon.
    expect((await exchange(port, "small")).toString()).toBe("small-answer");
    expect((await exchange(port, "small")).toString()).toBe("small-answer");
    expect(blocked).toBe(true);
    expect(written).toBeLessThan(24 * 1024 * 1024);
    const chunks: Buffer[] = [];
    stalled.on("data", (chunk: Buffer) => chunks.push(chunk));
    stalled.resume();
    await once(stalled, "end");
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(payload));
  }, 60_000);

  it("refuses a stream beyond its limit and keeps the others", async () => {
    const { port, daemonEnd } = await bridge(await tcpServer(echo));
    const sockets = await Promise.all(
      Array.from({ length: 128 }, async () => {
        const socket = net.connect({ port, host: "127.0.0.1" });
        await once(socket, "connect");
        return socket;
      }),
    );
    await expect.poll(() => daemonEnd.streamCount()).toBe(128);
    const refused = net.connect({ port, host: "127.0.0.1" });
    refused.on("error", () => undefined);
    await once(refused, "close");
    for (const socket of sockets) socket.destroy();
    await expect.poll(() => daemonEnd.streamCount()).toBe(0);
    expect((await exchange(port, "after")).toString()).toBe("after");
  });
});

/** One frame as the protocol writes it. */
function frame(type: number, id: number, payload: Buffer = Buffer.alloc(0), length = payload.length): Buffer {
  const header = Buffer.alloc(9);
  header.writeUInt8(type, 0);
  header.writeUInt32BE(id, 1);
  header.writeUInt32BE(length, 5);
  return Buffer.concat([header, payload]);
}

describe("the daemon's end of a bridge channel, fed by a hostile sandbox", () => {
  const hostile: [string, Buffer[]][] = [
    ["an unknown frame type", [frame(9, 1)]],
    [
      "a frame longer than 64 KiB (refused before its payload comes)",
      [frame(2, 1, Buffer.alloc(0), 0xffffffff)],
    ],
    ["data for a stream never opened", [frame(2, 7, Buffer.from("x"))]],
    ["streams opened out of order", [frame(1, 5), frame(1, 3)]],
    ["stream 0", [frame(1, 0)]],
    ["an OPEN with a payload", [frame(1, 1, Buffer.from("x"))]],
    ["a CREDIT of the wrong size", [frame(1, 1), frame(5, 1, Buffer.alloc(3))]],
    ["credit for more than was sent", [frame(1, 1), frame(5, 1, Buffer.from([0, 0, 0, 1]))]],
    [
      "data beyond the window",
      [frame(1, 1), ...Array.from({ length: 3 }, () => frame(2, 1, Buffer.alloc(65_536)))],
    ],
    ["data after the end", [frame(1, 1), frame(3, 1), frame(2, 1, Buffer.from("x"))]],
    // A flood of empty frames moves nothing and would queue a write each on a stalled stream.
    ["an empty DATA frame", [frame(1, 1), frame(2, 1)]],
  ];

  it.each(hostile)("closes only that channel on %s, without throwing", async (_name, frames) => {
    // A target that never reads: data beyond the window must not be handed on and credited.
    const silent = await tcpServer((socket) => {
      socket.pause();
      socket.on("error", () => socket.destroy());
    });
    const attacked = await bridge(silent);
    const neighbour = await bridge(await tcpServer(echo));
    const [inside, outside] = await socketPair();
    const faults: string[] = [];
    const channel: BridgeChannel = startBridgeChannel(outside, {
      accept: () => net.connect({ port: silent, host: "127.0.0.1" }),
      onFault: (reason) => faults.push(reason),
    });
    cleanups.push(() => channel.close());
    const closed = new Promise((resolve) => inside.once("close", resolve));
    inside.on("error", () => undefined);
    for (const piece of frames) inside.write(piece);
    await closed;
    expect(faults).toHaveLength(1);
    expect(channel.streamCount()).toBe(0);
    expect(outside.destroyed).toBe(true);
    // The other channels go on.
    expect(attacked.faults).toEqual([]);
    expect((await exchange(neighbour.port, "still-here")).toString()).toBe("still-here");
  });

  it("survives bytes that are not frames at all", async () => {
    const [inside, outside] = await socketPair();
    const faults: string[] = [];
    startBridgeChannel(outside, { accept: () => undefined, onFault: (reason) => faults.push(reason) });
    const closed = new Promise((resolve) => inside.once("close", resolve));
    inside.on("error", () => undefined);
    inside.write(randomBytes(100_000));
    await closed;
    expect(faults).toHaveLength(1);
  });

  it("reads frames however they are cut", async () => {
    const target = await tcpServer(echo);
    const [inside, outside] = await socketPair();
    const faults: string[] = [];
    startBridgeChannel(outside, {
      accept: () => net.connect({ port: target, host: "127.0.0.1", allowHalfOpen: true }),
      onFault: (reason) => faults.push(reason),
    });
    const bytes = Buffer.concat([frame(1, 1), frame(2, 1, Buffer.from("hello")), frame(3, 1)]);
    for (let index = 0; index < bytes.length; index++) {
      inside.write(bytes.subarray(index, index + 1));
      if (index % 3 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    const received: Buffer[] = [];
    inside.on("data", (chunk: Buffer) => received.push(chunk));
    await expect.poll(() => Buffer.concat(received).includes("hello")).toBe(true);
    expect(faults).toEqual([]);
  });

  it("refuses a stream it cannot accept with CLOSE, not a fault", async () => {
    const [inside, outside] = await socketPair();
    const faults: string[] = [];
    startBridgeChannel(outside, { accept: () => undefined, onFault: (reason) => faults.push(reason) });
    inside.write(frame(1, 1));
    const [answer] = (await once(inside, "data")) as [Buffer];
    expect([...answer]).toEqual([...frame(4, 1)]);
    expect(faults).toEqual([]);
  });
});
