import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../src/llm/chat-message.js";
import type { AgentEvent } from "../../../src/events/agent-event.js";
import type { Checkpoint } from "../../../src/checkpoints/checkpoint.js";
import { textReply } from "../../support/scripted-llm-server.js";
import { makeDefinition } from "../../support/make-definition.js";
import { withScriptedLlmServer } from "../../support/with-scripted-llm-server.js";
import { LoopHarness } from "./loop-harness.js";

const server = withScriptedLlmServer();

/** A checkpoint of `messages`, as the store hands a resumed run. */
function checkpointOf(messages: ChatMessage[]): Checkpoint {
  return {
    run: "r_test",
    round: 1,
    messages,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    cost_usd: 0,
    removed_tools: [],
    recent_calls: [],
    saved_at: new Date(0).toISOString(),
  };
}

const PROMPT: ChatMessage[] = [
  { role: "system", content: "You are a test agent." },
  { role: "user", content: "Do the test task" },
];
const CALL: ChatMessage = {
  role: "assistant",
  content: null,
  tool_calls: [{ id: "call_1", type: "function", function: { name: "ask_human", arguments: "{}" } }],
};

/** A harness resumed from `messages`, whose run log is read through a counted `history`. */
function resumed(messages: ChatMessage[], log: AgentEvent[] = []) {
  const harness = new LoopHarness(server, { definition: makeDefinition() });
  const reads = { count: 0 };
  harness.context.history = () => {
    reads.count += 1;
    return Promise.resolve(log);
  };
  harness.context.checkpoints = { resumeFrom: checkpointOf(messages), save: () => Promise.resolve() };
  return { harness, reads };
}

describe("a run resumed from its checkpoint", () => {
  // A run's log may hold millions of events: reading all of them at each resume made the resume's
  // time grow with the run (150 ms of CPU at 20,000 events), for answers only an interrupted call needs.
  it("does not read its run log when no call was cut off", async () => {
    const { harness, reads } = resumed([
      ...PROMPT,
      CALL,
      { role: "tool", tool_call_id: "call_1", content: "yes" },
    ]);
    server.enqueue(textReply("done"));
    expect(await harness.run()).toMatchObject({ status: "completed", result: "done" });
    expect(reads.count).toBe(0);
  });

  it("reads it for the answer a human gave to a call that was cut off", async () => {
    const answered: AgentEvent = {
      id: 7,
      agent: "test-agent",
      run: "r_test",
      time: new Date(0).toISOString(),
      type: "question",
      data: {
        id: "q_1",
        call_id: "call_1",
        question: "go?",
        state: "answered",
        answer: "go ahead",
        by: "ops",
      },
    };
    const { harness, reads } = resumed([...PROMPT, CALL], [answered]);
    server.enqueue(textReply("done"));
    expect(await harness.run()).toMatchObject({ status: "completed" });
    expect(reads.count).toBe(1);
    const sent = server.chatRequests[0]?.body as { messages: ChatMessage[] };
    expect(sent.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_1", content: "go ahead" });
  });
});
