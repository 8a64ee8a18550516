import { once } from "node:events";
import net from "node:net";

/** What the upstream does once it read a request's head: write `bytes`, then end, reset or stall. */
export interface UpstreamReply {
  bytes: Buffer;
  then: "end" | "reset" | "stall";
}

/** The body a good request gets back. */
export const GOOD_BODY = "good-answer-7c1e";

/**
 * A TCP server on 127.0.0.1 that answers raw bytes: `GET /good` a well-formed 200 with
 * {@link GOOD_BODY}, `/case/<n>` whatever `replies[n]` holds, anything else a short 200. It reads
 * the request's head only (up to 64 KiB), so a request through a tunnel works the same.
 */
export interface RawUpstream {
  port: number;
  /** The request targets read so far, in order (`/good`, `/case/1`, …). */
  targets(): readonly string[];
  /** Destroys the connections still open (stalled ones). */
  dropConnections(): void;
  close(): Promise<void>;
}

export async function startRawUpstream(replies: readonly UpstreamReply[]): Promise<RawUpstream> {
  const sockets = new Set<net.Socket>();
  const targets: string[] = [];
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    let head = "";
    const onData = (chunk: Buffer) => {
      head += chunk.toString("latin1");
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > 65_536) socket.destroy();
        return;
      }
      socket.off("data", onData);
      socket.resume();
      const target = head.slice(0, end).split(" ")[1] ?? "";
      targets.push(target);
      answer(socket, target, replies);
    };
    socket.on("data", onData);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    targets: () => targets,
    dropConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, "close");
    },
  };
}

function answer(socket: net.Socket, target: string, replies: readonly UpstreamReply[]): void {
  if (target === "/good") {
    const body = GOOD_BODY;
    socket.end(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
    return;
  }
  const index = /^\/case\/(\d+)$/.exec(target)?.[1];
  const reply = index === undefined ? undefined : replies[Number(index)];
  if (reply === undefined) {
    socket.end("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
    return;
  }
  if (reply.then === "end") socket.end(reply.bytes);
  else if (reply.then === "reset") socket.write(reply.bytes, () => socket.resetAndDestroy());
  else socket.write(reply.bytes);
}
