import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/llm/chat-message.js";
import { LlmError } from "../../src/llm/llm-error.js";
import { testClient } from "./client-settings.js";

const servers: Server[] = [];
const messages: ChatMessage[] = [{ role: "user", content: "the quarterly numbers, unpublished" }];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

interface Seen {
  method: string;
  body: string;
  authorization: string | undefined;
}

/** A server that answers every request with `answer` and keeps what it was sent. */
async function serve(answer: (seen: Seen) => { status: number; location?: string }): Promise<{
  url: string;
  seen: Seen[];
}> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const one = { method: request.method ?? "", body, authorization: request.headers.authorization };
      seen.push(one);
      const { status, location } = answer(one);
      response.writeHead(status, {
        "content-type": "text/html",
        ...(location === undefined ? {} : { location }),
      });
      response.end("<html>sign in</html>");
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
}

describe("the model client's requests, redirected", () => {
  for (const status of [301, 302, 303]) {
    it(`never send the conversation on to where a ${status} points (a sign-in page, say), as fetch does not`, async () => {
      const signIn = await serve(() => ({ status: 200 }));
      const gateway = await serve(() => ({ status, location: `${signIn.url}/login` }));
      const client = testClient(`${gateway.url}/v1`, { maxAttempts: 1 });

      const error = await failureOf(
        client.complete({ model: "m1", messages }, { signal: new AbortController().signal }),
      );

      expect(error).toBeInstanceOf(LlmError);
      expect(gateway.seen[0]?.body).toContain("quarterly numbers");
      expect(signIn.seen).toHaveLength(1);
      expect(signIn.seen[0]?.method).toBe("GET");
      expect(signIn.seen[0]?.body).toBe("");
      expect(signIn.seen[0]?.authorization).toBeUndefined();
    });
  }

  it("give up after 20 redirects, as fetch does, with an error that says the endpoint cannot be reached", async () => {
    const looping = await serve(() => ({ status: 307, location: "/v1/chat/completions" }));
    const client = testClient(`${looping.url}/v1`, { maxAttempts: 1 });

    const error = await failureOf(
      client.complete({ model: "m1", messages }, { signal: new AbortController().signal }),
    );

    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).code).toBe("LLM_NETWORK");
    // The first answer, a redirect, hands the request to fetch, which sends it again and follows
    // 20 redirects: 1 + 21 requests, and no more.
    expect(looping.seen).toHaveLength(22);
  });
});
