import type { Duplex } from "node:stream";

export interface BridgeChannelOptions {
  /**
   * The far side opened a stream: the socket that carries it on this side (the daemon's: a
   * connection to the child's network proxy), or undefined to refuse it. Without `accept` the far
   * side may not open streams at all (the sandbox's side).
   */
  accept?: (() => Duplex | undefined) | undefined;
  /** Called once when the far side broke the protocol; the channel and its streams are closed. */
  onFault?: ((reason: string) => void) | undefined;
}

/** One end of a bridge channel. */
export interface BridgeChannel {
  /** Carries `socket` over the channel as a new stream (the sandbox's side); refused when full. */
  open(socket: Duplex): void;
  /** Closes every stream and the channel. Idempotent. */
  close(): void;
  /** Streams open now. */
  streamCount(): number;
}

/**
 * Many TCP connections over one inherited socket (the network bridge's channel, see
 * proxy-bridge.ts): the sandbox's end opens a stream per connection to its 127.0.0.1:3128, the
 * daemon's end connects each to the child's proxy. Nothing inside the sandbox has to make a unix
 * socket, which the seccomp filter forbids.
 *
 * Frames: `type u8 | stream id u32 | length u32 | payload` (big-endian), the types OPEN, DATA
 * (at most 64 KiB), END (no more data this way: a half close), CLOSE (the stream is gone) and
 * CREDIT (u32: bytes consumed). Back-pressure is per stream: a side sends at most WINDOW bytes a
 * stream's receiver has not yet handed on to its socket and credited back, and pauses that
 * socket meanwhile, so a slow reader slows only its own stream and buffers stay bounded.
 *
 * The daemon's end reads what a hostile process may write: a frame too long, of an unknown type,
 * for a stream never opened, or data beyond the window closes this channel (and only it), calls
 * `onFault`, and never throws out of an event handler. At most MAX_STREAMS streams are open at
 * once; more are refused with CLOSE. When the far side stops reading, this side stops reading it.
 *
 * The function is self-contained (nothing outside it but Node's globals): its source also runs
 * inside the sandbox, as text (`startBridgeChannel.toString()`).
 */
export function startBridgeChannel(channel: Duplex, options: BridgeChannelOptions): BridgeChannel {
  const HEADER_BYTES = 9;
  const MAX_PAYLOAD = 64 * 1024;
  const WINDOW = 128 * 1024;
  const MAX_STREAMS = 128;
  /** Unread bytes of ours in the channel beyond which the far side is not read (legit: < this). */
  const MAX_UNREAD = MAX_STREAMS * (WINDOW + 4 * HEADER_BYTES) + 1024 * 1024;
  const OPEN = 1;
  const DATA = 2;
  const END = 3;
  const CLOSE = 4;
  const CREDIT = 5;

  interface Stream {
    id: number;
    socket: Duplex;
    /** Bytes this side may still send. */
    credit: number;
    /** Bytes received, not yet written out to the socket. */
    received: number;
    /** Bytes written out, not yet credited back. */
    consumed: number;
    /** Data read from the socket, waiting for credit. */
    queue: Buffer[];
    /** A write to the socket is under way: frames that come meanwhile are copied into `pending`. */
    writing: boolean;
    /**
     * Received bytes waiting for the write under way, in one buffer of a window's size (the window
     * bounds them): never one queued write per frame, which a flood of tiny frames would pile up.
     */
    pending: Buffer | undefined;
    pendingLength: number;
    /** The far side ended while a write was under way: end the socket once the writes are out. */
    endAfterWrites: boolean;
    /** The far side closed while a write was under way: destroy the socket once the writes are out. */
    closeAfterWrites: boolean;
    localEnded: boolean;
    /** The socket is closed: CLOSE goes once what it sent before is through. */
    localClosed: boolean;
    endSent: boolean;
    remoteEnded: boolean;
  }

  const streams = new Map<number, Stream>();
  let lastId = 0;
  let closed = false;
  /** Bytes read from the channel and not yet taken as frames, in the order they came. */
  const pieces: Buffer[] = [];
  let buffered = 0;

  function send(type: number, id: number, payload?: Buffer): void {
    if (closed || channel.destroyed) return;
    const header = Buffer.allocUnsafe(HEADER_BYTES);
    header.writeUInt8(type, 0);
    header.writeUInt32BE(id, 1);
    header.writeUInt32BE(payload === undefined ? 0 : payload.length, 5);
    if (payload === undefined || payload.length === 0) channel.write(header);
    else {
      // One writev of both, without copying the payload.
      channel.cork();
      channel.write(header);
      channel.write(payload);
      channel.uncork();
    }
    // The far side does not read what we send: stop reading what it sends until it does.
    if (channel.writableLength > MAX_UNREAD) channel.pause();
  }

  function shutDown(): void {
    if (closed) return;
    closed = true;
    for (const stream of streams.values()) stream.socket.destroy();
    streams.clear();
    channel.destroy();
  }

  function fault(reason: string): void {
    if (closed) return;
    shutDown();
    try {
      options.onFault?.(reason);
    } catch {
      // A fault report must not throw out of a stream's event handler.
    }
  }

  /**
   * Sends what the stream's credit allows, pausing its socket while data waits for credit; then
   * END once the socket ended, and CLOSE once it closed, each after the data read before it.
   */
  function flush(stream: Stream): void {
    while (stream.queue.length > 0 && stream.credit > 0) {
      const head = stream.queue[0] as Buffer;
      if (head.length === 0) {
        stream.queue.shift();
        continue;
      }
      const size = Math.min(head.length, stream.credit, MAX_PAYLOAD);
      send(DATA, stream.id, head.subarray(0, size));
      stream.credit -= size;
      if (size === head.length) stream.queue.shift();
      else stream.queue[0] = head.subarray(size);
    }
    if (stream.queue.length > 0) {
      if (!stream.localClosed) stream.socket.pause();
      return;
    }
    if (stream.localEnded && !stream.endSent) {
      stream.endSent = true;
      send(END, stream.id);
    }
    if (stream.localClosed) {
      streams.delete(stream.id);
      send(CLOSE, stream.id);
    } else if (!stream.localEnded) stream.socket.resume();
  }

  function attach(id: number, socket: Duplex): void {
    const stream: Stream = {
      id,
      socket,
      credit: WINDOW,
      received: 0,
      consumed: 0,
      queue: [],
      writing: false,
      pending: undefined,
      pendingLength: 0,
      endAfterWrites: false,
      closeAfterWrites: false,
      localEnded: false,
      localClosed: false,
      endSent: false,
      remoteEnded: false,
    };
    streams.set(id, stream);
    socket.on("data", (chunk: Buffer) => {
      if (streams.get(id) !== stream) return;
      stream.queue.push(chunk);
      flush(stream);
    });
    socket.on("end", () => {
      stream.localEnded = true;
      if (streams.get(id) === stream) flush(stream);
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", (hadError: boolean) => {
      if (streams.get(id) !== stream) return;
      stream.localClosed = true;
      // A socket that failed is aborted: what it left unsent goes, and no END before the CLOSE.
      if (hadError) {
        stream.queue = [];
        stream.endSent = true;
      }
      flush(stream);
    });
  }

  function receiveData(stream: Stream, payload: Buffer): void {
    if (stream.remoteEnded) return fault(`data after the end of stream ${stream.id}`);
    // An empty frame moves nothing and costs a write: only a flood would send one.
    if (payload.length === 0) return fault(`an empty DATA frame on stream ${stream.id}`);
    stream.received += payload.length;
    if (stream.received > WINDOW) return fault(`stream ${stream.id} sent beyond its window`);
    if (stream.socket.destroyed) return;
    if (stream.writing) {
      stream.pending ??= Buffer.allocUnsafe(WINDOW);
      payload.copy(stream.pending, stream.pendingLength);
      stream.pendingLength += payload.length;
      return;
    }
    writeOut(stream, payload);
  }

  /** One write to the socket at a time per stream; what came meanwhile follows as one chunk. */
  function writeOut(stream: Stream, chunk: Buffer): void {
    stream.writing = true;
    const size = chunk.length;
    stream.socket.write(chunk, (error) => {
      stream.writing = false;
      if (error) return;
      stream.received -= size;
      stream.consumed += size;
      // Credit in steps of a quarter window: one small frame per 32 KiB, never a stall (a sender
      // out of credit means a full window is received, so its credit comes back once written).
      if (stream.consumed >= WINDOW / 4 && streams.get(stream.id) === stream) {
        const credit = Buffer.allocUnsafe(4);
        credit.writeUInt32BE(stream.consumed, 0);
        stream.consumed = 0;
        send(CREDIT, stream.id, credit);
      }
      if (stream.pendingLength > 0 && stream.pending !== undefined && !stream.socket.destroyed) {
        const next = Buffer.from(stream.pending.subarray(0, stream.pendingLength));
        stream.pendingLength = 0;
        writeOut(stream, next);
      } else if (stream.closeAfterWrites) {
        stream.socket.destroy();
      } else if (stream.endAfterWrites) {
        stream.endAfterWrites = false;
        stream.socket.end();
      }
    });
  }

  function receiveOpen(id: number): void {
    if (options.accept === undefined) return fault("the far side may not open streams");
    if (id <= lastId) return fault(`stream ${id} opened out of order`);
    lastId = id;
    const socket = streams.size < MAX_STREAMS ? options.accept() : undefined;
    if (socket === undefined) return send(CLOSE, id);
    attach(id, socket);
  }

  function receiveFrame(type: number, id: number, payload: Buffer): void {
    if (id === 0) return fault("stream 0");
    if (type === OPEN) {
      if (payload.length !== 0) return fault("an OPEN frame with a payload");
      return receiveOpen(id);
    }
    if (type < OPEN || type > CREDIT) return fault(`unknown frame type ${type}`);
    if (type !== DATA && payload.length !== (type === CREDIT ? 4 : 0)) {
      return fault(`a frame of type ${type} with ${payload.length} bytes`);
    }
    const stream = streams.get(id);
    if (stream === undefined) {
      // A stream this side closed may still get frames sent before the far side knew.
      return id <= lastId ? undefined : fault(`a frame for stream ${id}, never opened`);
    }
    if (type === DATA) return receiveData(stream, payload);
    if (type === END) {
      if (stream.remoteEnded) return fault(`stream ${id} ended twice`);
      stream.remoteEnded = true;
      if (stream.writing) stream.endAfterWrites = true;
      else stream.socket.end();
      return;
    }
    if (type === CLOSE) {
      streams.delete(id);
      if (stream.writing) stream.closeAfterWrites = true;
      else stream.socket.destroy();
      return;
    }
    stream.credit += payload.readUInt32BE(0);
    if (stream.credit > WINDOW) return fault(`stream ${id} credited more than it received`);
    flush(stream);
  }

  /**
   * Reads the frames in what arrived. Pieces are joined once a frame is whole, not on every
   * chunk: a far side that trickles a frame byte by byte costs its length once, not its square.
   */
  function receive(chunk: Buffer): void {
    pieces.push(chunk);
    buffered += chunk.length;
    while (!closed && buffered >= HEADER_BYTES) {
      if ((pieces[0] as Buffer).length < HEADER_BYTES) pieces.splice(0, pieces.length, Buffer.concat(pieces));
      const head = pieces[0] as Buffer;
      const length = head.readUInt32BE(5);
      if (length > MAX_PAYLOAD) return fault(`a frame of ${length} bytes`);
      const size = HEADER_BYTES + length;
      if (buffered < size) return;
      const joined = head.length >= size ? head : Buffer.concat(pieces);
      const rest = joined.subarray(size);
      pieces.splice(0, pieces.length === 1 || head.length < size ? pieces.length : 1);
      if (rest.length > 0) pieces.unshift(rest);
      buffered -= size;
      receiveFrame(joined.readUInt8(0), joined.readUInt32BE(1), joined.subarray(HEADER_BYTES, size));
    }
  }

  channel.on("data", (chunk: Buffer) => {
    try {
      receive(chunk);
    } catch (error) {
      fault(`a frame could not be read: ${String(error)}`);
    }
  });
  channel.on("drain", () => {
    if (!closed) channel.resume();
  });
  channel.on("error", () => shutDown());
  channel.on("end", () => shutDown());
  channel.on("close", () => shutDown());

  return {
    open(socket) {
      if (closed || streams.size >= MAX_STREAMS || lastId >= 0xffffffff) {
        socket.destroy();
        return;
      }
      lastId += 1;
      send(OPEN, lastId);
      attach(lastId, socket);
    },
    close: shutDown,
    streamCount: () => streams.size,
  };
}
