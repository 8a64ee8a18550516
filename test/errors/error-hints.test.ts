import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { APIConnectionError } from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { toErrorReply } from "../../src/api/error-reply.js";
import { runAgentCommand } from "../../src/cli/commands/run.js";
import { describeForUser } from "../../src/cli/output.js";
import { printRunSummary } from "../../src/cli/terminal/run-summary.js";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { ERROR_CODES } from "../../src/errors/error-codes.js";
import { ERROR_HINTS } from "../../src/errors/error-hints.js";
import { CircuitBreaker } from "../../src/llm/circuit-breaker.js";
import { classifyLlmError } from "../../src/llm/llm-error.js";
import { outcomeOfThrow, recordPatchOf } from "../../src/run-vocabulary/run-outcome.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { createTempProject, type TempProject } from "../support/temp-project.js";
import { captureRunIo } from "../cli/run-project.js";

/** What each main path shows a user for an error of this code that carries no hint of its own. */
function shownHints(code: (typeof ERROR_CODES)[number]): Record<string, string> {
  const error = new AgentdError(code, "it went wrong");
  const reply = toErrorReply(error).body.error;
  const outcome = outcomeOfThrow(error, new AbortController().signal, "llm");
  const record = {
    ...recordPatchOf(outcome),
    usage: { total_tokens: 0 },
    cost_usd: 0,
  } as unknown as RunRecord;
  let summary = "";
  printRunSummary(record, { stdout: () => undefined, stderr: (text) => (summary += text), color: false });
  return {
    table: ERROR_HINTS[code],
    api: reply.hint ?? "",
    cli: describeForUser(error).split(" — ")[1] ?? "",
    run_record: outcome.error?.hint ?? "",
    run_summary: /to fix: (.+)/.exec(summary)?.[1] ?? "",
  };
}

describe("every error code says what to do next", () => {
  it.each([...new Set(ERROR_CODES)])("%s has a hint in the API, the CLI and a failed run", (code) => {
    const shown = shownHints(code);
    for (const [where, hint] of Object.entries(shown)) {
      expect({ code, where, hint: hint.trim().length > 10 }).toEqual({ code, where, hint: true });
    }
    // The API answers 500 INTERNAL for codes it does not map; its hint is then INTERNAL's.
    expect([ERROR_HINTS[code], ERROR_HINTS.INTERNAL]).toContain(shown.api);
  });

  it("keeps an error's own, more precise hint over its code's", () => {
    const error = new AgentdError("LLM_HTTP", "401", { hint: "check llm.api_key" });
    expect(describeForUser(error)).toBe("401 — check llm.api_key");
    expect(outcomeOfThrow(error, new AbortController().signal, "llm").error?.hint).toBe("check llm.api_key");
  });
});

describe("LLM errors", () => {
  it("LLM_NETWORK reads once, without a doubled '.:', and carries the start-up summary's hint", () => {
    const error = classifyLlmError(
      new APIConnectionError({ message: "Connection error.", cause: new TypeError("fetch failed") }),
      { endpoint: "http://127.0.0.1:11434/v1", model: "llama3.1" },
    );
    expect(error.message).toContain("Connection error: fetch failed");
    expect(error.message).not.toContain(".:");
    expect(error.hint).toContain("ollama pull llama3.1");
  });

  it("LLM_CIRCUIT_OPEN says how long calls are paused and what to do", () => {
    let now = 1_000_000;
    const breaker = new CircuitBreaker("http://llm.example/v1", "m1", {
      failureThreshold: 1,
      cooldownMilliseconds: 30_000,
      now: () => now,
    });
    breaker.acquire();
    breaker.failed();
    now += 5_000;
    const error = (() => {
      try {
        breaker.acquire();
      } catch (thrown) {
        return thrown as AgentdError;
      }
      throw new Error("the circuit did not open");
    })();
    expect(error.code).toBe("LLM_CIRCUIT_OPEN");
    expect(error.message).toContain("paused for 25 s more");
    expect(error.hint).toContain("fallback_models");
  });
});

describe("agentd run against a model server that does not answer", () => {
  let project: TempProject | undefined;
  afterEach(() => project?.remove());

  it("ends with the error and the thing to do, as the start-up summary says it", async () => {
    // Port 9 (discard) on loopback: nothing listens there, the connection is refused at once.
    project = createTempProject({
      config: {
        llm: { base_url: "http://127.0.0.1:9/v1", model: "m1", retries: { max_attempts: 1 } },
        log: { level: "silent" },
      },
    });
    mkdirSync(path.join(project.root, "agents"), { recursive: true });
    writeFileSync(
      path.join(project.root, "agents", "hello.md"),
      "---\ndescription: Says hello\ntask: Say hello\n---\nYou greet people.\n",
    );
    const { io, output } = captureRunIo();
    const code = await runAgentCommand({ agent: "hello", config: "config.yaml", cwd: project.root }, io);
    expect(code).toBe(1);
    expect(output.stderr).toMatch(
      /LLM_NETWORK: cannot reach m1 at http:\/\/127\.0\.0\.1:9\/v1: Connection error: /,
    );
    expect(output.stderr).not.toContain(".:");
    expect(output.stderr).toContain(
      "to fix: check that http://127.0.0.1:9/v1 is up, or copy config.example.yaml",
    );
  });
});
