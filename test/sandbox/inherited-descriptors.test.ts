import { spawn } from "node:child_process";
import { once } from "node:events";
import type { Readable, Writable } from "node:stream";
import { expect, it } from "vitest";
import { AGENTD_MAIN, environmentWithoutAgentd } from "../support/agentd-cli.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

/** A project whose agent `writer` is told by its model to write to descriptor 100 from its shell. */
async function writerTryingDescriptor100() {
  const llm = await kit.scriptedLlm();
  const project = kit.project({ llmUrl: llm.url });
  project.writeAgent("writer", { tools: ["shell"], permissions: { allow: ["shell"] } });
  llm.enqueue(
    toolCallReply({ name: "shell", arguments: { command: `echo escaped >&100; echo "[exit $?]"` } }),
    textReply("tried"),
  );
  return project;
}

it("a sandboxed command cannot write to a descriptor whatever started the daemon left open", async () => {
  const project = await writerTryingDescriptor100();
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

it("a sandboxed command of `agentd run` cannot write to a descriptor whatever started it left open", async () => {
  const project = await writerTryingDescriptor100();
  // `agentd run` from a CI step or a shell's `100>file`: the run and its sandboxes are in this process.
  const child = spawn(
    process.execPath,
    [AGENTD_MAIN, "run", "--config", project.configFile, "--json", "writer", "write"],
    {
      env: environmentWithoutAgentd(),
      stdio: [
        "ignore",
        "pipe",
        "pipe",
        ...Array.from({ length: 98 }, (_, index) => (index === 97 ? "pipe" : "ignore") as "pipe" | "ignore"),
      ],
    },
  );
  kit.defer(() => void child.kill("SIGKILL"));
  let inherited = "";
  let stdout = "";
  const extra = (child.stdio as ReadonlyArray<Readable | Writable | null | undefined>)[100] as Readable;
  extra.on("data", (chunk: Buffer) => (inherited += chunk.toString("utf8")));
  extra.on("error", () => undefined);
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  const [code] = (await once(child, "exit")) as [number | null];

  expect(inherited, "what the sandboxed shell wrote to descriptor 100").toBe("");
  expect(stdout).toContain("[exit 1]");
  expect(stdout).toMatch(/Bad file descriptor/);
  expect(code).toBe(0);
  expect(inherited).toBe("");
});
