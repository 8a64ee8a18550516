import { type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import * as undici from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { modelFetch } from "../../src/llm/model-fetch.js";

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** An endpoint whose answer never ends and keeps the socket full; `closed` settles when a client hangs up. */
async function floodingEndpoint(): Promise<{ url: string; closed: Promise<void> }> {
  let hungUp: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (hungUp = resolve));
  const server = createServer((request, response: ServerResponse) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = Buffer.alloc(16_384, "a");
      const fill = () => {
        while (response.write(chunk));
      };
      response.on("drain", fill);
      response.on("close", hungUp);
      fill();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`, closed };
}

describe("a model answer's body", () => {
  it("can be cancelled before it is read (as the SDK cancels a body it does not need), ending the request", async () => {
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", record);
    try {
      const endpoint = await floodingEndpoint();
      const fetchModel = modelFetch(undici);
      const answer = await fetchModel(endpoint.url, {
        method: "POST",
        headers: new Headers({ "content-type": "application/json" }),
        body: "{}",
      });
      expect(answer.status).toBe(200);
      await answer.body?.cancel();
      // The socket is let go of: the endpoint sees the client hang up.
      await endpoint.closed;
      // One more turn of the event loop, where a stream that throws after its cancel would throw.
      await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught).toEqual([]);
    } finally {
      process.off("uncaughtException", record);
    }
  });

  it("is read as it streams and lets the socket go when its reader stops early (as the SDK's loop does on a stop)", async () => {
    const endpoint = await floodingEndpoint();
    const fetchModel = modelFetch(undici);
    const answer = await fetchModel(endpoint.url, {
      method: "POST",
      headers: new Headers({ "content-type": "application/json" }),
      body: "{}",
    });
    let bytes = 0;
    for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      if (bytes >= 65_536) break;
    }
    expect(bytes).toBeGreaterThanOrEqual(65_536);
    await endpoint.closed;
  });
});
