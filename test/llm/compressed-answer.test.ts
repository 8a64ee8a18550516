import { type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, constants, createGzip, deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { LlmError } from "../../src/llm/llm-error.js";
import { RunAbort, RunControl } from "../../src/run-vocabulary/run-control.js";
import { testClient } from "./client-settings.js";

const servers: Server[] = [];
const messages = [{ role: "user" as const, content: "hello" }];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** One server-sent event of a chat completion chunk. */
function event(delta: object, finishReason: string | null = null): string {
  const chunk = { id: "c1", object: "chat.completion.chunk", created: 1, model: "m1" };
  return `data: ${JSON.stringify({ ...chunk, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
}

const ANSWER = `${event({ role: "assistant", content: "decoded answer" })}${event({}, "stop")}data: [DONE]\n\n`;

/** An endpoint that answers every chat request through `answer`, once the request is read. */
async function endpoint(answer: (response: ServerResponse) => void): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => answer(response));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error("the call succeeded"),
    (error: unknown) => error,
  );
}

describe("a model server that compresses its answer though not asked to", () => {
  it("is read as fetch reads it: gzip, deflate, br and two codings in turn", async () => {
    const encodings: [string, Buffer][] = [
      ["gzip", gzipSync(ANSWER)],
      ["deflate", deflateSync(ANSWER)],
      ["br", brotliCompressSync(ANSWER)],
      ["gzip, br", brotliCompressSync(gzipSync(ANSWER))],
    ];
    for (const [encoding, body] of encodings) {
      const url = await endpoint((response) => {
        response.writeHead(200, { "content-type": "text/event-stream", "content-encoding": encoding });
        response.end(body);
      });
      const answer = await testClient(url, { maxAttempts: 1 }).complete(
        { model: "m1", messages },
        { signal: new AbortController().signal },
      );
      expect(answer.text, encoding).toBe("decoded answer");
    }
  });

  it("says what the server said when its compressed answer is an error", async () => {
    const url = await endpoint((response) => {
      response.writeHead(400, { "content-type": "application/json", "content-encoding": "gzip" });
      response.end(gzipSync(JSON.stringify({ error: { message: "model m1 does not exist" } })));
    });
    const error = await failure(
      testClient(url, { maxAttempts: 1 }).complete(
        { model: "m1", messages },
        { signal: new AbortController().signal },
      ),
    );
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).message).toContain("model m1 does not exist");
  });

  it("fails the call with a clear error, not a hang or a crash, when the compressed stream is damaged", async () => {
    const url = await endpoint((response) => {
      const compressed = gzipSync(ANSWER);
      compressed.fill(0x5a, 20, 40);
      response.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" });
      response.end(compressed);
    });
    const error = await failure(
      testClient(url, { maxAttempts: 1 }).complete(
        { model: "m1", messages },
        { signal: new AbortController().signal },
      ),
    );
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).message).toMatch(/^the call to m1 at .* failed: /);
  });

  it("ends the connection when the run is stopped mid-stream", async () => {
    let hungUp: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (hungUp = resolve));
    let started: () => void = () => undefined;
    const streaming = new Promise<void>((resolve) => (started = resolve));
    const url = await endpoint((response) => {
      response.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" });
      const gzip = createGzip({ flush: constants.Z_SYNC_FLUSH });
      gzip.pipe(response);
      gzip.write(event({ role: "assistant", content: "first words, then nothing" }));
      response.on("close", hungUp);
      started();
    });
    const control = new RunControl();
    const pending = failure(testClient(url).complete({ model: "m1", messages }, { signal: control.signal }));
    await streaming;
    control.stop("user_stop");
    const error = await pending;
    expect(error).toBeInstanceOf(RunAbort);
    await closed;
  });
});
