import { describe, expect, it } from "vitest";
import type { DaemonProcess } from "../support/daemon-process.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { startRawUpstream } from "./raw-upstream.js";

const kit = useTestKit();

/** The run's record once it ended. */
async function ended(daemon: DaemonProcess, run: string): Promise<{ status: string; result?: string }> {
  return waitFor(
    async () => {
      const record = (await daemon.request("GET", `/runs/${run}`)).body as {
        status: string;
        result?: string;
      };
      return ["completed", "failed", "stopped"].includes(record.status) ? record : undefined;
    },
    `run ${run} to end`,
    60_000,
  );
}

/** A shell line that sends `request` (printf escapes) to the sandbox's proxy bridge and prints the answer. */
function toProxy(request: string): string {
  return `exec 3<>/dev/tcp/127.0.0.1/3128 && printf '${request}' >&3 && timeout 10 cat <&3; echo "[exit $?]"`;
}

describe("the daemon's network proxy, driven from inside a real sandbox", () => {
  it(
    "answers CONNECT to port 99999 and an upstream's status 099 with 400 and 502, and keeps serving",
    { timeout: 120_000 },
    async () => {
      const odd = await startRawUpstream([
        { bytes: Buffer.from("HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n"), then: "end" },
      ]);
      kit.defer(() => odd.close());
      const llm = await kit.scriptedLlm();
      const project = kit.project({ llmUrl: llm.url });
      // A port-less loopback entry: every port of 127.0.0.1 is allowed, 99999 included as far as
      // the list goes.
      project.writeAgent("prober", {
        tools: ["shell"],
        permissions: { allow: ["shell"] },
        sandbox: { network: ["127.0.0.1"] },
      });
      const shell = (command: string) => toolCallReply({ name: "shell", arguments: { command } });
      llm.enqueue(
        shell(toProxy("CONNECT 127.0.0.1:99999 HTTP/1.1\\r\\nHost: 127.0.0.1:99999\\r\\n\\r\\n")),
        shell(toProxy(`GET http://127.0.0.1:${odd.port}/case/0 HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n`)),
        textReply("probed"),
      );
      const daemon = await kit.daemon(project.configFile);
      const first = await daemon.request("POST", "/agents/prober/runs", { task: "probe the proxy" });
      const { run } = first.body as { run: string };
      expect(await ended(daemon, run)).toMatchObject({ status: "completed", result: "probed" });

      const events = (await daemon.request("GET", `/runs/${run}/events`)).body as {
        events: Array<{ type: string; data: { output?: string } }>;
      };
      const [connect, odd099] = events.events
        .filter((event) => event.type === "observation")
        .map((event) => event.data.output ?? "");
      expect(connect).toContain("HTTP/1.1 400 Bad Request");
      expect(connect).toContain("port 99999 is not in 1-65535");
      expect(odd099).toContain("HTTP/1.1 502 Bad Gateway");
      expect(odd099).toContain("answered with status 99");

      // The daemon is still there, and a second sandboxed run goes through its proxy.
      const health = await daemon.request("GET", "/health");
      expect(health.status).toBe(200);
      llm.enqueue(shell(toProxy("CONNECT 127.0.0.1:0 HTTP/1.1\\r\\n\\r\\n")), textReply("again"));
      const second = await daemon.request("POST", "/agents/prober/runs", { task: "once more" });
      expect(await ended(daemon, (second.body as { run: string }).run)).toMatchObject({
        status: "completed",
        result: "again",
      });
      const stillRunning = await Promise.race([daemon.exited.then(() => false), Promise.resolve(true)]);
      expect(stillRunning).toBe(true);
    },
  );
});
