import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";
import { type RecordedRequest, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const SECRET = "tok-Limit-5e8d2c1a9f";
/** The start of a chat span's `gen_ai.output.messages`, up to the answer's text. */
const OUTPUT_PREFIX = '[{"role":"assistant","parts":[{"type":"text","content":"';
const kit = useTestKit();

describe("an operator's attribute length limit", () => {
  it(
    "cuts span strings after they are masked, so no part of a secret leaves",
    { timeout: 120_000 },
    async () => {
      const receiver: OtlpReceiver = await startOtlpReceiver();
      kit.defer(() => receiver.close());
      // The model repeats the secret its tool printed, at the start of its answer.
      const reply = (request: RecordedRequest) =>
        (request.body?.messages ?? []).some((message) => message.role === "tool")
          ? textReply(`${SECRET} is the token`)
          : toolCallReply({ name: "shell", arguments: { command: "echo {{secret:token}}" }, id: "c1" });
      const { project } = await kit.scriptedProject(reply, {
        config: { telemetry: { traces: { endpoint: receiver.url, content: true } } },
      });
      const set = await agentd(["secrets", "set", "token"], { cwd: project.root, input: SECRET });
      expect(set.exitCode, set.stderr).toBe(0);
      project.writeAgent("echoes", {
        tools: ["shell"],
        secrets: ["token"],
        permissions: { allow: ["shell"] },
      });
      // The limit falls in the middle of the secret in the answer's attribute.
      const limit = OUTPUT_PREFIX.length + 10;
      const daemon = await kit.daemon(project.configFile, {
        environment: { OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: String(limit) },
      });
      const run = await startRun(daemon, "echoes", "print the token");
      await waitForRunEnd(daemon, run);
      const spans = await receiver.waitFor((received) =>
        received.some((span) => span.name === "invoke_agent echoes") ? received : undefined,
      );
      const answers = spans.map((span) => span.attributes["gen_ai.output.messages"]);
      // The last chat's answer, cut at the limit: what is left of the secret is its mask.
      expect(answers).toContain(`${OUTPUT_PREFIX}[secret:to`);
      for (const span of spans)
        for (const value of Object.values(span.attributes))
          if (typeof value === "string") expect(value.length).toBeLessThanOrEqual(limit);
      const bodies = Buffer.concat(receiver.bodies).toString("latin1");
      expect(bodies).not.toContain(SECRET.slice(0, 8));
    },
  );
});
