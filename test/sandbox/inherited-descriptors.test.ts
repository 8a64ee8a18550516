import { expect, it } from "vitest";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

it("a sandboxed command cannot write to a descriptor whatever started the daemon left open", async () => {
  const llm = await kit.scriptedLlm();
  const project = kit.project({ llmUrl: llm.url });
  project.writeAgent("writer", { tools: ["shell"], permissions: { allow: ["shell"] } });
  llm.enqueue(
    toolCallReply({ name: "shell", arguments: { command: `echo escaped >&100; echo "[exit $?]"` } }),
    textReply("tried"),
  );
  // As a supervisor or a CI runner may: descriptor 100 (above the first 16, which Node marks close-on-exec itself), open across exec, a pipe to the test.
  const daemon = await kit.daemon(project.configFile, { inheritedDescriptor: 100 });
  const { run } = (await daemon.request("POST", "/agents/writer/runs", { task: "write" })).body as {
    run: string;
  };
  await waitFor(
    async () =>
      ((await daemon.request("GET", `/runs/${run}`)).body as { status: string }).status === "completed",
    `run ${run} to complete`,
    60_000,
  );
  const events = (await daemon.request("GET", `/runs/${run}/events`)).body as {
    events: Array<{ type: string; data: { output?: string } }>;
  };
  const output = events.events.find((event) => event.type === "observation")?.data.output ?? "";
  expect(output).toContain("[exit 1]");
  expect(output).toMatch(/Bad file descriptor/);
  expect(daemon.inherited()).toBe("");
});
