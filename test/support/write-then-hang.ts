import { type RecordedRequest, type ScriptedReplyValue, toolCallReply } from "./scripted-llm-server.js";

/**
 * A model whose first round writes `one.txt` and whose later rounds never answer: a run held in
 * its second model call, where a test stops or kills the daemon to see what a resume makes of it.
 */
export function writeOneFileThenHang(request: RecordedRequest): ScriptedReplyValue {
  const rounds = (request.body?.messages ?? []).filter((message) => message.role === "assistant").length;
  if (rounds > 0) return { type: "hang" };
  return toolCallReply({ name: "write_file", arguments: { path: "one.txt", content: "1" } });
}
