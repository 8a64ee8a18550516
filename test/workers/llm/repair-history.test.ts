import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../src/llm/chat-message.js";
import { repairHistory } from "../../../src/workers/llm/repair-history.js";

const assistant = (...ids: string[]): ChatMessage => ({
  role: "assistant",
  content: null,
  tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "echo", arguments: "{}" } })),
});
const result = (id: string): ChatMessage => ({ role: "tool", tool_call_id: id, content: `done ${id}` });
const user: ChatMessage = { role: "user", content: "go" };

describe("repairHistory", () => {
  it("returns a well-formed history as the same array, results in any order", () => {
    const messages = [user, assistant("a", "b"), result("b"), result("a"), assistant(), user];
    const repair = repairHistory(messages);
    expect(repair.messages).toBe(messages);
    expect([repair.addedResults, repair.droppedResults]).toEqual([0, 0]);
  });

  it("fixes each kind of fault the quick check must not let through", () => {
    const cases: Array<[ChatMessage[], number, number]> = [
      [[user, result("x")], 0, 1], // an orphan result
      [[user, assistant("a", "b"), result("a")], 1, 0], // a missing result at the end
      [[user, assistant("a"), user, result("a")], 1, 1], // a result after the group closed
      [[user, assistant("a"), result("a"), result("a")], 0, 1], // a second result for one call
      [[user, assistant("a", "a"), result("a")], 0, 0], // one id twice: one result answers both
      [[user, assistant("a"), result("b")], 1, 1], // a result for another call
    ];
    for (const [messages, added, dropped] of cases) {
      const repair = repairHistory(messages);
      expect([repair.addedResults, repair.droppedResults]).toEqual([added, dropped]);
      if (added + dropped === 0) expect(repair.messages).toBe(messages);
      else expect(repairHistory(repair.messages).messages).toBe(repair.messages);
    }
  });
});
