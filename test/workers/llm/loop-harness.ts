import type { ErrorCode } from "../../../src/errors/error-codes.js";
import { z } from "zod";
import type { Config } from "../../../src/config/config-schema.js";
import { ConfigSchema } from "../../../src/config/config-schema.js";
import type { AgentDefinition } from "../../../src/definitions/agent-definition.js";
import type { AgentEvent, EventType } from "../../../src/events/agent-event.js";
import { EventBus } from "../../../src/events/event-bus.js";
import type { ModelClientSettings, ModelProvider } from "../../../src/llm/model-client.js";
import { RunControl } from "../../../src/run-vocabulary/run-control.js";
import type {
  ToolCall,
  ToolExecutor,
  ToolResult,
  ToolRunScope,
  ToolSpec,
} from "../../../src/tools/tool-executor.js";
import { LlmWorker, type LlmRunOptions } from "../../../src/workers/llm/llm-worker.js";
import type { RunContext } from "../../../src/workers/worker.js";
import type { RunOutcome } from "../../../src/run-vocabulary/run-outcome.js";
import { testClient } from "../../llm/client-settings.js";
import type { ScriptedLlmServer } from "../../support/scripted-llm-server.js";

interface TestTool {
  description: string;
  arguments: z.ZodType<Record<string, unknown>>;
  run(input: Record<string, unknown>): string;
  /** A refusal by policy (the code and message the real executor would give), before running. */
  refuse?(input: Record<string, unknown>): { code: ErrorCode; output: string } | undefined;
}

/** Small real tools: arguments validated with zod; failures come back as results, like the real executor. */
const TOOLS: Record<string, TestTool> = {
  echo: {
    description: "Returns its text",
    arguments: z.object({ text: z.string() }),
    run: (input) => `echo: ${String(input.text)}`,
  },
  bulky: {
    description: "Returns a long text",
    arguments: z.object({ size: z.number().int().positive() }),
    run: (input) => "x".repeat(Number(input.size)),
  },
  guarded: {
    description: "Runs only what its policy allows",
    arguments: z.object({ command: z.string() }),
    refuse: (input) =>
      input.command === "allowed"
        ? undefined
        : {
            code: "TOOL_DENIED",
            output: "guarded call denied (denied by guarded(forbidden*)); do not retry it",
          },
    run: (input) => `ran ${String(input.command)}`,
  },
  broken: {
    description: "Always fails",
    arguments: z.object({}),
    run: () => {
      throw new Error("the disk is on fire");
    },
  },
};

/** A ToolExecutor of test tools that emits action/observation events the way the real one does. */
export class TestToolExecutor implements ToolExecutor {
  readonly calls: ToolCall[] = [];

  async specs(): Promise<ToolSpec[]> {
    return Object.entries(TOOLS).map(([name, tool]) => ({
      name,
      description: tool.description,
      parameters: z.toJSONSchema(tool.arguments) as Record<string, unknown>,
    }));
  }

  async execute(call: ToolCall, scope: ToolRunScope): Promise<ToolResult> {
    this.calls.push(call);
    const agent = scope.definition.id;
    scope.events.publish({
      agent,
      run: scope.runId,
      type: "action",
      data: { call_id: call.callId, tool: call.tool, arguments: call.argumentsJson },
    });
    const result = this.#run(call);
    scope.events.publish({
      agent,
      run: scope.runId,
      type: "observation",
      data: { call_id: call.callId, tool: call.tool, ok: result.ok, output: result.output, duration_ms: 0 },
    });
    return result;
  }

  #run(call: ToolCall): ToolResult {
    const tool = TOOLS[call.tool];
    if (!tool) return { ok: false, code: "TOOL_NOT_FOUND", output: `no tool ${call.tool}` };
    let input: unknown;
    try {
      input = JSON.parse(call.argumentsJson);
    } catch {
      return { ok: false, code: "TOOL_BAD_ARGUMENTS", output: "arguments are not JSON" };
    }
    const parsed = tool.arguments.safeParse(input);
    if (!parsed.success) return { ok: false, code: "TOOL_BAD_ARGUMENTS", output: parsed.error.message };
    const refusal = tool.refuse?.(parsed.data);
    if (refusal) return { ok: false, ...refusal };
    try {
      return { ok: true, output: tool.run(parsed.data) };
    } catch (error) {
      return {
        ok: false,
        code: "TOOL_FAILED",
        output: error instanceof Error ? error.message : String(error),
      };
    }
  }
}

export interface HarnessOptions {
  definition: AgentDefinition;
  task?: string;
  llm?: Partial<Config["llm"]>;
  client?: Partial<ModelClientSettings>;
  timeoutMilliseconds?: number;
  /** The executor the loop calls; default: the small test tools above. */
  executor?: ToolExecutor;
  /** What the loop calls instead of the client itself: a wrapper around it. */
  wrapModel?: (client: ModelProvider) => ModelProvider;
}

/** One LLM run wired to a scripted server: real client, real loop, an event bus that records. */
export class LoopHarness {
  readonly events: AgentEvent[] = [];
  readonly tools = new TestToolExecutor();
  readonly control: RunControl;
  readonly context: RunContext;
  readonly worker: LlmWorker;
  readonly #listeners = new Set<() => void>();

  constructor(server: ScriptedLlmServer, options: HarnessOptions) {
    const bus = new EventBus();
    bus.subscribe((event) => {
      this.events.push(event);
      for (const listener of [...this.#listeners]) listener();
    });
    this.control = new RunControl(
      options.timeoutMilliseconds === undefined ? {} : { timeoutMilliseconds: options.timeoutMilliseconds },
    );
    this.context = {
      runId: "r_test",
      definition: options.definition,
      task: options.task ?? "Do the test task",
      control: this.control,
      events: bus,
      setStatus: () => undefined,
    };
    const llm = ConfigSchema.parse({ llm: options.llm ?? {} }).llm;
    const client = testClient(server.url, { prices: llm.prices, ...options.client });
    this.worker = new LlmWorker({
      model: options.wrapModel ? options.wrapModel(client) : client,
      tools: options.executor ?? this.tools,
      llm,
    });
  }

  run(options?: LlmRunOptions): Promise<RunOutcome> {
    return this.worker.run(this.context, options);
  }

  ofType<Type extends EventType>(type: Type): Array<Extract<AgentEvent, { type: Type }>> {
    return this.events.filter((event): event is Extract<AgentEvent, { type: Type }> => event.type === type);
  }

  /** Resolves with the first event matching, waiting for it to be published. */
  waitForEvent(predicate: (event: AgentEvent) => boolean, timeoutMilliseconds = 10_000): Promise<AgentEvent> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.events.find(predicate);
        if (!found) return false;
        clearTimeout(timer);
        this.#listeners.delete(check);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        this.#listeners.delete(check);
        reject(new Error("the event did not come"));
      }, timeoutMilliseconds);
      if (!check()) this.#listeners.add(check);
    });
  }
}
