import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { postJson } from "../../src/deliveries/post-json.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A receiver that refuses every post with `status` and a body that never ends; counts what it sent. */
async function endlessRefusal(status: number): Promise<{ url: string; sent: () => number }> {
  let sent = 0;
  const block = Buffer.from(`receiver broken ${"x".repeat(1000)}\n`.repeat(256));
  const receiver = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(status, { "content-type": "text/plain" });
      const pump = () => {
        while (!response.destroyed) {
          sent += block.length;
          if (!response.write(block)) return;
        }
      };
      response.on("drain", pump);
      pump();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(() => resolve(undefined)));
  });
  return { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, sent: () => sent };
}

describe("a receiver's refusal", () => {
  it("keeps the start of a body without end and stops reading it, instead of reading until the timeout", async () => {
    const receiver = await endlessRefusal(500);
    const outcome = await postJson(receiver.url, "{}", {}, new AbortController().signal);

    expect(outcome).toMatchObject({ ok: false, retryable: true, statusCode: 500, cutAtEnd: true });
    expect(outcome.ok === false && outcome.error).toMatch(
      /^POST http:\/\/127\.0\.0\.1:\d+ answered 500: receiver broken x+$/,
    );
    // What the socket's buffers hold, not the gigabytes 30 seconds of reading took before.
    expect(receiver.sent()).toBeLessThan(32 * 1024 * 1024);
  });
});
