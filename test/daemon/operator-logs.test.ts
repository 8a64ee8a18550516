import path from "node:path";
import { describe, expect, it } from "vitest";
import { textReply } from "../support/scripted-llm-server.js";
import { startRun, waitForRunEnd } from "./api-shapes.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

/** The keys of a JSON object's top level, in order, duplicates kept (JSON.parse keeps the last). */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let index = 0; index < line.length; index++) {
    const character = line[index];
    if (character === '"') {
      let end = index + 1;
      while (line[end] !== '"') end += line[end] === "\\" ? 2 : 1;
      if (depth === 1 && line[end + 1] === ":") keys.push(line.slice(index + 1, end));
      index = end;
    } else if (character === "{" || character === "[") depth++;
    else if (character === "}" || character === "]") depth--;
  }
  return keys;
}

describe("the daemon log", () => {
  it("has a line per run start and end, warns on an MCP server that cannot start, and repeats no key", async () => {
    const llm = await kit.scriptedLlm();
    llm.setDefaultReply(() => textReply("done"));
    const workspace = kit.project({
      llmUrl: llm.url,
      config: {
        mcp_servers: { broken: { command: "/nonexistent/mcp-server" } },
      },
    });
    workspace.writeAgent("writer", { task: "Write" });
    workspace.writeAgent("mcp-user", { task: "Use it", tools: ["mcp:broken/*"] });
    const running = await kit.daemon(workspace.configFile);
    const completed = await startRun(running, "writer", "Write a line");
    const failed = await startRun(running, "mcp-user", "Use the server");
    for (const run of [completed, failed]) await waitForRunEnd(running, run);
    const lines = await waitFor(async () => {
      const parsed = running
        .stderr()
        .split("\n")
        .filter((line) => line.startsWith("{"));
      return parsed.filter((line) => line.includes('"run ended"')).length >= 2 ? parsed : undefined;
    }, "two run-ended lines");
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toContainEqual(
      expect.objectContaining({ msg: "run started", agent: "writer", run: completed, trigger: "api" }),
    );
    expect(records).toContainEqual(
      expect.objectContaining({
        msg: "run ended",
        agent: "writer",
        run: completed,
        status: "completed",
        duration_ms: expect.any(Number),
        tokens: expect.any(Number),
      }),
    );
    expect(records).toContainEqual(
      expect.objectContaining({ msg: "run ended", run: failed, status: "failed", reason: "tool_error" }),
    );
    expect(records).toContainEqual(
      expect.objectContaining({ msg: "MCP server could not start", server: "broken" }),
    );
    const repeated = lines.filter((line) => new Set(topLevelKeys(line)).size !== topLevelKeys(line).length);
    expect(repeated).toEqual([]);
    expect(path.isAbsolute(workspace.configFile)).toBe(true);
  });
});
