import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/llm/chat-message.js";
import { LlmError } from "../../src/llm/llm-error.js";
import { closedPort } from "../support/closed-port.js";
import { textReply } from "../support/scripted-llm-server.js";
import { withScriptedLlmServer } from "../support/with-scripted-llm-server.js";
import { testClient } from "./client-settings.js";

const server = withScriptedLlmServer();
const messages: ChatMessage[] = [{ role: "user", content: "hello" }];
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** An endpoint that answers every request with a redirect (307: same method and body) to `target`. */
async function redirectingEndpoint(target: string): Promise<string> {
  const redirect = createServer((request, response) => {
    response.writeHead(307, { location: `${target}${(request.url ?? "").replace(/^\/v1/, "")}` });
    response.end();
  });
  await new Promise<void>((resolve) => redirect.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => redirect.close(() => resolve())));
  return `http://127.0.0.1:${(redirect.address() as AddressInfo).port}/v1`;
}

/**
 * An endpoint that moves its API: `/old/...` answers a redirect (307) to `/v1/...` on the same
 * origin, which is passed on to `target` as it came (headers included).
 */
async function movedWithinOrigin(target: string): Promise<string> {
  const { hostname, port } = new URL(target);
  const front = createServer((request, response) => {
    const requested = request.url ?? "/";
    if (requested.startsWith("/old/")) {
      response.writeHead(307, { location: requested.replace(/^\/old/, "/v1") });
      response.end();
      return;
    }
    const forward = httpRequest(
      { hostname, port, path: requested, method: request.method, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    request.pipe(forward);
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => front.close(() => resolve())));
  return `http://127.0.0.1:${(front.address() as AddressInfo).port}/old`;
}

/** One model call through `endpoint`, the scripted server answering `answer`. */
async function completeThrough(endpoint: string, answer: string) {
  server.enqueue(textReply(answer));
  return testClient(endpoint).complete({ model: "m1", messages }, { signal: new AbortController().signal });
}

describe("the model client's requests", () => {
  it("follow a redirect of the endpoint with the same request, as fetch does", async () => {
    const response = await completeThrough(await redirectingEndpoint(server.url), "moved but here");

    expect(response.text).toBe("moved but here");
    expect(server.chatRequests[0]?.body?.messages).toEqual(messages);
    // Another origin is not given the endpoint's key, as fetch does not give it.
    expect(server.chatRequests[0]?.headers.authorization).toBeUndefined();
  });

  it("keep the key and the content type across a redirect within the endpoint's origin", async () => {
    const response = await completeThrough(await movedWithinOrigin(server.url), "moved within");

    expect(response.text).toBe("moved within");
    expect(server.chatRequests[0]?.headers.authorization).toBe("Bearer test-key");
    expect(server.chatRequests[0]?.headers["content-type"]).toBe("application/json");
    expect(server.chatRequests[0]?.body?.messages).toEqual(messages);
  });

  it("say the endpoint cannot be reached, and why, when nothing listens", async () => {
    const client = testClient(`http://127.0.0.1:${await closedPort()}/v1`, { maxAttempts: 1 });
    const error = await client
      .complete({ model: "m1", messages }, { signal: new AbortController().signal })
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );

    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).code).toBe("LLM_NETWORK");
    expect((error as LlmError).message).toMatch(/cannot reach m1 at .*: Connection error: .*ECONNREFUSED/);
  });
});
