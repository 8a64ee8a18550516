import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../src/llm/chat-message.js";
import { HistoryRepairer, repairHistory } from "../../../src/workers/llm/repair-history.js";

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

  it("repairs a history grown round by round as it would repair the whole", () => {
    // Each history grows a well-formed one by appended messages, as the loop does between rounds.
    const start = (): ChatMessage[] => [user, assistant("a"), result("a"), assistant()];
    const appended: ChatMessage[][] = [
      [assistant("b"), result("b")], // well formed
      [result("x")], // an orphan result right after a closed group
      [result("a")], // a second result for a call of the closed group
      [assistant("c")], // a call without its result
      [assistant("c"), result("c"), result("c")], // a second result for a new call
      [user, assistant("d", "e"), result("e"), result("d")], // well formed, results in any order
    ];
    for (const more of appended) {
      const repairer = new HistoryRepairer();
      const messages = start();
      expect(repairer.repair(messages).messages).toBe(messages);
      messages.push(...more);
      const whole = repairHistory([...messages]);
      const repair = repairer.repair(messages);
      expect([repair.addedResults, repair.droppedResults]).toEqual([
        whole.addedResults,
        whole.droppedResults,
      ]);
      expect(repair.messages).toEqual(whole.messages);
    }
  });
});
