import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { DaemonClient } from "../../src/cli/daemon-client.js";
import { startRunOnce } from "../../src/cli/start-run-once.js";

describe("startRunOnce", () => {
  it("sends one key per call, again after a 503 and a cut connection, and stops on a 4xx", async () => {
    const keys: Array<string | undefined> = [];
    let answers = ["503", "cut", "202"];
    const server = createServer((request, response) => {
      keys.push(request.headers["idempotency-key"] as string | undefined);
      const answer = answers.shift() ?? "404";
      if (answer === "cut") return request.socket.destroy();
      const status = Number(answer);
      const body =
        status === 202
          ? { run: "r_1", status: "queued" }
          : { error: { code: status === 503 ? "STORE_UNAVAILABLE" : "NOT_FOUND", message: "no" } };
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = new DaemonClient({ baseUrl: `http://127.0.0.1:${port}` });
      const started = await startRunOnce(client, "/agents/a", {}, z.object({ run: z.string() }));
      expect(started.run).toBe("r_1");
      expect(keys).toHaveLength(3);
      expect(new Set(keys).size).toBe(1);
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);

      keys.length = 0;
      answers = ["404"];
      await expect(
        startRunOnce(client, "/agents/a", {}, z.object({ run: z.string() })),
      ).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
      expect(keys).toHaveLength(1);
    } finally {
      server.close();
    }
  });
});
