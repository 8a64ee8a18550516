import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, it } from "vitest";
import { parseHostRule } from "../../src/config/host-rules.js";
import { ToolHarness } from "../support/tool-harness.js";

it("names a refused IPv6 address with its port the way a host-list entry takes it", async () => {
  const server = createServer((_request, response) => response.end("reached"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const harness = new ToolHarness({
    permissions: { allow: ["http_request"] },
    sandbox: { network: ["127.0.0.1:1"] },
  });
  try {
    const refused = await harness.call("http_request", {
      method: "GET",
      url: `http://[::ffff:127.0.0.1]:${port}/`,
    });
    expect(refused).toMatchObject({ ok: false, code: "HOST_NOT_ALLOWED" });
    const entry = `[::ffff:7f00:1]:${port}`;
    expect(refused.output).toContain(`add "${entry}" to sandbox.network`);
    // The entry the hint names is one the host list reads as that address and port.
    expect(parseHostRule(entry)).toEqual({ host: "::ffff:7f00:1", wildcard: false, port });
  } finally {
    harness.dispose();
    server.close();
  }
});
