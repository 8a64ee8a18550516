import type { Duplex } from "node:stream";
import { refusalStatusText } from "./proxy-status-text.js";

/**
 * Answers on a bare socket (a CONNECT, a request node could not parse) and closes it: the status,
 * and a plain-text body saying why. The body is printable ASCII whatever `reason` held, since a
 * reason may quote what the client sent.
 */
export function endWithRawReply(socket: Duplex, status: number, reason: string): void {
  // Answered already (a timeout and an error may both try): the first answer stands.
  if (socket.destroyed || socket.writableEnded) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = `agentd sandbox: ${reason.replace(/[^\x20-\x7e]/g, "?")}\n`;
  const head =
    `HTTP/1.1 ${status} ${refusalStatusText(status, reason)}\r\n` +
    `content-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`;
  endAfterWrites(socket, head + body);
}

/**
 * How long a socket whose answer is written keeps reading (and dropping) what its client still
 * sends before it is closed: a close with unread input makes the kernel answer with a reset,
 * which can discard the answer before the client reads it (a slow sender never saw its 408).
 */
const LINGER_MILLISECONDS = 1_000;

/**
 * Ends a socket once what is queued on it (and `last`, if given) is written, and closes it then,
 * even if the other side keeps its half open: at once when the client ends its side, else after
 * LINGER_MILLISECONDS of reading and dropping its input. A client that never reads is left to the
 * socket's idle timeout.
 */
export function endAfterWrites(socket: Duplex, last?: string): void {
  if (last === undefined) socket.end();
  else socket.end(last);
  socket.once("finish", () => {
    if (socket.readableEnded) return socket.destroy();
    const close = () => {
      clearTimeout(linger);
      socket.destroy();
    };
    const linger = setTimeout(close, LINGER_MILLISECONDS);
    linger.unref();
    socket.once("end", close);
    socket.once("close", () => clearTimeout(linger));
    socket.on("data", () => undefined);
    socket.resume();
  });
}
