import { STATUS_CODES, maxHeaderSize } from "node:http";
import type { Socket } from "node:net";
import type { ErrorCode } from "../errors/error-codes.js";
import type { ErrorBody } from "./error-reply.js";

/** What Node's HTTP parser reports before a request exists: headers over the limit, or garbage. */
interface ClientError extends Error {
  code?: string;
}

/** The status, code and message of a request Node refused before any route could see it. */
function describe(error: ClientError): { statusCode: number; body: ErrorBody } {
  if (error.code === "HPE_HEADER_OVERFLOW") {
    const code: ErrorCode = "HEADERS_TOO_LARGE";
    return {
      statusCode: 431,
      body: {
        error: {
          code,
          message: `the request's headers are larger than the daemon accepts (${Math.round(maxHeaderSize / 1024)} KB in all)`,
          hint: "send fewer or shorter headers (cookies from other local sites add up)",
        },
      },
    };
  }
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    const code: ErrorCode = "BAD_REQUEST";
    return { statusCode: 408, body: { error: { code, message: "the request did not arrive in time" } } };
  }
  const code: ErrorCode = "BAD_REQUEST";
  return { statusCode: 400, body: { error: { code, message: "the request is not valid HTTP/1.1" } } };
}

/**
 * Answers a request Node's HTTP parser refused (fastify's `clientErrorHandler`) with the API's usual
 * `{ "error": { "code", "message" } }` body, then closes the connection as Node does.
 */
export function answerClientError(error: ClientError, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  if (socket.writable) {
    const { statusCode, body } = describe(error);
    const text = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? "Error"}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
        `Connection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy(error);
}
