import { describe, expect, it } from "vitest";
import type { Checkpoint } from "../../../src/checkpoints/checkpoint.js";
import type { ChatMessage } from "../../../src/llm/chat-message.js";
import { textReply, toolCallReply } from "../../support/scripted-llm-server.js";
import { makeDefinition } from "../../support/make-definition.js";
import { LoopHarness } from "./loop-harness.js";
import { withScriptedLlmServer } from "../../support/with-scripted-llm-server.js";

const server = withScriptedLlmServer();

type Saved = Omit<Checkpoint, "run" | "saved_at">;

/** A harness whose checkpoints are kept in memory, each save as it was made. */
function checkpointedHarness(): { harness: LoopHarness; saves: Saved[] } {
  const harness = new LoopHarness(server, { definition: makeDefinition() });
  const saves: Saved[] = [];
  harness.context.checkpoints = {
    save: (checkpoint) => {
      saves.push(structuredClone(checkpoint));
      return Promise.resolve();
    },
  };
  return { harness, saves };
}

/** What the model was sent in its `index`-th request, without the system prompt's text. */
function sentMessages(index: number): unknown[] {
  return (server.chatRequests[index]?.body?.messages ?? []) as unknown[];
}

/** The last save made before the `index`-th model request went out. */
function lastSaveBefore(saves: Saved[], requestMessages: number): ChatMessage[] | undefined {
  return saves.filter((save) => save.messages.length <= requestMessages).at(-1)?.messages;
}

describe("the checkpoint of a round", () => {
  it("holds every result of the round by the next model call", async () => {
    const { harness, saves } = checkpointedHarness();
    server.enqueue(
      toolCallReply([
        { name: "echo", arguments: { text: "a" } },
        { name: "echo", arguments: { text: "b" } },
      ]),
      textReply("done"),
    );
    expect(await harness.run()).toMatchObject({ status: "completed", result: "done" });
    const next = sentMessages(1);
    expect(lastSaveBefore(saves, next.length)).toEqual(next);
  });

  it("holds a removed tool's answer, though that call never ran", async () => {
    const { harness, saves } = checkpointedHarness();
    const broken = (attempt: number) => toolCallReply({ name: "broken", arguments: { attempt } });
    server.enqueue(
      broken(1),
      broken(2),
      broken(3),
      toolCallReply([
        { name: "echo", arguments: { text: "a" } },
        { name: "broken", arguments: { attempt: 4 } },
      ]),
      textReply("ok"),
    );
    await harness.run();
    expect(harness.tools.calls.filter((call) => call.tool === "broken")).toHaveLength(3);
    const next = sentMessages(4);
    expect(String((next.at(-1) as ChatMessage).content)).toContain("disabled for the rest of this run");
    expect(lastSaveBefore(saves, next.length)).toEqual(next);
    expect(saves.at(-1)?.removed_tools).toEqual(["broken"]);
  });

  it("holds the loop warning sent after the round's results", async () => {
    const { harness, saves } = checkpointedHarness();
    const same = () => toolCallReply({ name: "echo", arguments: { text: "again" } });
    server.enqueue(same(), same(), same(), textReply("stopped repeating"));
    await harness.run();
    const next = sentMessages(3);
    expect((next.at(-1) as ChatMessage).role).toBe("user");
    expect(lastSaveBefore(saves, next.length)).toEqual(next);
  });
});
