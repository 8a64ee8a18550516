import { type Server, type Socket, createServer, connect } from "node:net";

/** A TCP proxy to one port on loopback that can hold every byte without closing a connection. */
export interface PausableProxy {
  /** The proxy's port on 127.0.0.1. */
  port: number;
  /**
   * From now on nothing is forwarded either way (bytes wait in the proxy's buffers) and new
   * connections are accepted but not connected through: a cut that keeps TCP up, as a silently
   * dropping firewall or a stalled network does.
   */
  hold(): void;
  /** Forwards again: what was held goes through, in order; connections accepted meanwhile connect. */
  release(): void;
  close(): Promise<void>;
}

/** Starts a proxy from a free loopback port to `127.0.0.1:targetPort()` (read at each connection). */
export async function startPausableProxy(targetPort: () => number): Promise<PausableProxy> {
  let holding = false;
  const sockets = new Set<Socket>();
  const held: Array<{ chunk: Buffer; from: Socket; to: Socket }> = [];
  const pending: Array<() => void> = [];

  const pipeHeld = (from: Socket, to: Socket) => {
    from.on("data", (chunk: Buffer) => {
      if (!holding) {
        to.write(chunk);
        return;
      }
      // Held: stop reading (TCP's own window then holds the sender) and keep this chunk for later.
      from.pause();
      held.push({ chunk, from, to });
    });
    from.on("end", () => to.end());
    from.on("error", () => to.destroy());
    from.on("close", () => to.destroy());
  };

  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.pause();
    const through = () => {
      const upstream = connect(targetPort(), "127.0.0.1");
      sockets.add(upstream);
      upstream.on("close", () => sockets.delete(upstream));
      pipeHeld(client, upstream);
      pipeHeld(upstream, client);
      client.resume();
    };
    if (holding) pending.push(through);
    else through();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no port");
  return {
    port: address.port,
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      // Every held chunk goes out first, in order; only then is reading resumed.
      const chunks = held.splice(0);
      for (const { chunk, to } of chunks) to.write(chunk);
      for (const { from } of chunks) from.resume();
      for (const through of pending.splice(0)) through();
    },
    close: async () => {
      holding = false;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
