import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { postJson } from "../../src/deliveries/post-json.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/**
 * A receiver (a broken proxy, a hostile endpoint a URL was pointed at) that answers 500 and then
 * sends its body without end: the attempt keeps an excerpt for its error and stops reading, rather
 * than holding every byte in the daemon's memory until the attempt's 30 s run out.
 */
it(
  "reads only the start of a refusal's endless body, and keeps an excerpt",
  { timeout: 60_000 },
  async () => {
    let written = 0;
    let closed = false;
    const server = createServer((_request, response) => {
      response.writeHead(500, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(64 * 1_024, "overloaded ");
      const pump = (): void => {
        while (!closed) {
          written += chunk.length;
          if (!response.write(chunk)) {
            response.once("drain", pump);
            return;
          }
        }
      };
      response.on("close", () => (closed = true));
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

    const outcome = await postJson(url, "{}", {}, new AbortController().signal);

    expect(outcome).toMatchObject({
      ok: false,
      retryable: true,
      statusCode: 500,
      cutAtEnd: true,
      error: expect.stringMatching(/^POST http:\/\/127\.0\.0\.1:\d+ answered 500: overloaded overloaded/),
    });
    expect((outcome as { error: string }).error.length).toBeLessThan(400);
    // What the receiver could push before the daemon hung up: socket buffers, not the whole stream.
    expect(written).toBeLessThan(32 * 1_024 * 1_024);
  },
);

/**
 * A receiver that answers 500 and sends its refusal slowly, never finishing, until the attempt's
 * time runs out: the part it did send is what tells the user why, and is kept in the error.
 */
it("keeps what came of a refusal sent slowly until the attempt timed out", { timeout: 30_000 }, async () => {
  const server = createServer((_request, response) => {
    response.writeHead(500, { "content-type": "text/plain" });
    response.write("quota exceeded for this hook; retry after ");
    // …and nothing more: the rest never comes.
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

  // A short timeout in place of the 30 s: the answer's head and first piece come at once on loopback.
  const outcome = await postJson(url, "{}", {}, new AbortController().signal, 2_000);

  expect(outcome).toMatchObject({
    ok: false,
    retryable: true,
    statusCode: 500,
    cutAtEnd: true,
    error: `POST ${new URL(url).origin} answered 500 (the rest of its answer did not come: the attempt timed out): quota exceeded for this hook; retry after`,
  });
});
