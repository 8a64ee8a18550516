import { describe, expect, it } from "vitest";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";
import { textReply } from "../support/scripted-llm-server.js";
import { expectResumedInTrace } from "../support/resumed-trace.js";
import { writeOneFileThenHang } from "../support/write-then-hang.js";
import { useTestKit } from "../support/test-kit.js";
import { getRun, startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const kit = useTestKit();

describe("a run resumed after kill -9", () => {
  it(
    "goes on in the trace its record names, under the span the crash lost",
    { timeout: 120_000 },
    async () => {
      const receiver: OtlpReceiver = await startOtlpReceiver();
      kit.defer(() => receiver.close());
      // Round 1 writes a file; round 2 never answers until the daemon is gone.
      const { llm, project } = await kit.scriptedProject(writeOneFileThenHang, {
        config: { telemetry: { traces: { endpoint: receiver.url } } },
      });
      project.writeAgent("steady", {
        resume: true,
        workdir: "./work",
        tools: ["write_file"],
        permissions: { allow: ["write_file"] },
      });
      const environment = { OTEL_BSP_SCHEDULE_DELAY: "50" };
      let daemon = await kit.daemon(project.configFile, { environment });
      const run = await startRun(daemon, "steady", "write");
      await llm.waitForChatRequests(2, 30_000);
      const first = await getRun(daemon, run);
      expect(first).toMatchObject({
        trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
        span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      });
      await daemon.kill();
      llm.setDefaultReply(() => textReply("resumed and done"));
      daemon = await kit.daemon(project.configFile, { environment });
      expect(await waitForRunEnd(daemon, run)).toMatchObject({
        status: "completed",
        trace_id: first.trace_id,
      });
      await expectResumedInTrace(receiver, {
        agent: "steady",
        run,
        traceId: first.trace_id,
        firstSpanId: first.span_id,
      });
    },
  );
});
