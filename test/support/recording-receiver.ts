import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestKit } from "./test-kit.js";

/** One request a recording receiver took: its path, headers and body. */
export interface ReceivedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * A local HTTP server standing in for a webhook target (Slack, a CI, a hook endpoint): records
 * every request and answers `status()` (200 by default). Closed with the kit.
 */
export async function recordingReceiver(
  kit: TestKit,
  status: () => number = () => 200,
): Promise<{ url: string; received: ReceivedRequest[] }> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
      );
      received.push({ path: request.url ?? "", headers, body });
      response.writeHead(status()).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  kit.defer(
    () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}
