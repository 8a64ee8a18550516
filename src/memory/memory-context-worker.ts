import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import type { Worker } from "../workers/worker.js";
import { memorySettingsOf } from "./agent-memory.js";
import { lastRunsSection } from "./last-runs-section.js";
import { memoryKeyOf } from "./memory-key.js";
import { memorySection } from "./memory-prompt-section.js";
import type { MemoryService } from "./memory-service.js";

export interface MemoryContextOptions {
  memories: MemoryService;
  /** The agent's runs created before `before`, newest first, at most `limit` (the run manager's list). */
  runsBefore: (agent: string, before: string, limit: number) => Promise<RunRecord[]>;
  redact: (text: string) => string;
}

/**
 * Wraps each worker so a run of an agent with `memory:` or `context: { last_runs }` starts with a
 * system prompt that holds them, read when the run starts (a hand edit of the file, an operator's
 * PUT or another run's write before it are seen). An agent with neither is run as it was: no read.
 */
export function withMemoryContext(
  workerFor: (definition: AgentDefinition) => Worker,
  options: MemoryContextOptions,
): (definition: AgentDefinition) => Worker {
  return (definition) => {
    const worker = workerFor(definition);
    const settings = memorySettingsOf(definition);
    const lastRuns = definition.frontmatter.context?.last_runs ?? 0;
    if (settings.mode === "none" && lastRuns === 0) return worker;
    // Told to write only when it can: the tools are offered (not under `capabilities: no-tools`),
    // and to the LLM loop (a CLI tool has no memory tools; it reads the memory).
    const canWrite =
      definition.frontmatter.tools.includes("memory_add") && definition.frontmatter.worker === "llm";
    const promptSettings =
      settings.mode === "write" && !canWrite ? { ...settings, mode: "read" as const } : settings;
    return {
      run: async (context) => {
        const sections = [definition.systemPrompt];
        if (settings.mode !== "none") {
          const key = memoryKeyOf(definition.id, settings);
          const memory = await options.memories.read(key);
          sections.push(
            memorySection({
              memory,
              settings: promptSettings,
              scope: settings.scope,
              redact: options.redact,
            }),
          );
        }
        const runContext = definition.frontmatter.context;
        if (runContext !== undefined && lastRuns > 0) {
          const runs = await options.runsBefore(definition.id, context.runId, lastRuns);
          sections.push(lastRunsSection(runs, runContext, options.redact));
        }
        const systemPrompt = sections.filter((section) => section.trim() !== "").join("\n\n");
        return worker.run({ ...context, definition: { ...context.definition, systemPrompt } });
      },
    };
  };
}
