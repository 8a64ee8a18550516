import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { recordingReceiver } from "../support/recording-receiver.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();
const WEBHOOK_SECRET = `whsec_${Buffer.from("a-webhook-secret-of-32-bytes-len").toString("base64")}`;

interface Delivery {
  to: string;
  status: string;
}

describe("a run whose result is megabytes long", () => {
  it(
    "is delivered cut to 100,000 characters, and each delivery stores no more",
    { timeout: 120_000 },
    async () => {
      const hook = await recordingReceiver(kit);
      // 1.5 million characters: a CLI worker keeps up to 1 Mi, a model's answer is bounded by max_tokens.
      const result = "verdict: ".repeat(166_666);
      const { project } = await kit.scriptedProject(textReply(result), {
        config: { vault: { backend: "env" } },
      });
      project.writeAgent("reviewer", {
        limits: { max_tokens: 5_000_000, max_cost_usd: 1_000 },
        deliver: [
          { to: "webhook", url: `${hook.url}/in`, secret: "{{secret:hook}}" },
          { to: "file", path: "verdicts.txt" },
        ],
      });
      const daemon = await kit.daemon(project.configFile, {
        environment: { AGENTD_SECRET_HOOK: WEBHOOK_SECRET },
      });
      const run = await startRun(daemon, "reviewer", "review");
      // The run's record keeps the whole result.
      expect((await waitForRunEnd(daemon, run)).result).toBe(result);
      const deliveries = await waitFor(async () => {
        const listed = (await daemon.request("GET", `/deliveries?run=${run}`)).body as {
          deliveries: Delivery[];
        };
        return (
          listed.deliveries.length === 2 && listed.deliveries.every((one) => one.status === "sent") && listed
        );
      }, "both deliveries sent");
      const [request] = hook.received;
      const payload = new Webhook(WEBHOOK_SECRET).verify(request?.body ?? "", request?.headers ?? {}) as {
        data: { result: string; text: string };
      };
      expect(payload.data.result.startsWith("verdict: verdict: ")).toBe(true);
      expect(payload.data.result.length).toBeLessThan(100_200);
      expect(payload.data.result).toContain("more characters here: the run's record has the whole text]");
      expect(payload.data.text.length).toBeLessThanOrEqual(100_000);
      expect(request?.body.length).toBeLessThan(250_000);
      // What the daemon keeps of the two deliveries, and what it serves of them.
      expect(statSync(path.join(project.dataDirectory, "deliveries.json")).size).toBeLessThan(500_000);
      expect(JSON.stringify(deliveries).length).toBeLessThan(500_000);
      const file = readFileSync(
        path.join(project.root, ".agentd", "workspaces", "reviewer", "verdicts.txt"),
        "utf8",
      );
      expect(file.length).toBeLessThan(100_200);
    },
  );
});
