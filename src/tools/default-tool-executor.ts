import { performance } from "node:perf_hooks";
import type { Config } from "../config/config-schema.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import { toAgentdError } from "../errors/agentd-error.js";
import type { ErrorCode } from "../errors/error-codes.js";
import type { ApprovalGate } from "../approvals/approval-gate.js";
import type { ToolHooks } from "./tool-hooks.js";
import { capabilityRefusal } from "./capability-refusal.js";
import type { Logger } from "../logging/logger.js";
import { checkPermission, restrictedByPattern } from "../permissions/permission-check.js";
import type { RunControl } from "../run-vocabulary/run-control.js";
import type { SandboxHost } from "../sandbox/sandbox-host.js";
import type { SecretRedactor } from "../secrets/secret-redactor.js";
import type { Vault } from "../vault/vault.js";
import { maskedCappedOutput } from "./masked-capped-output.js";
import { settleOrAbandon } from "../util/settle-or-abandon.js";
import { loggerInScope, scopeOfSignal } from "../telemetry/trace-scope.js";
import { injectSecrets } from "./inject-secrets.js";
import { agentToolName } from "./agent-tool-name.js";
import { type ListedTool, listedTool } from "./listed-tool-name.js";
import { modelToolName } from "./model-tool-name.js";
import type { ToolCatalog } from "./tool-catalog.js";
import type { ToolContext, ToolDefinition, ToolOutput } from "./tool-definition.js";
import type { ToolCall, ToolExecutor, ToolResult, ToolRunScope, ToolSpec } from "./tool-executor.js";

export interface DefaultToolExecutorOptions {
  catalog: ToolCatalog;
  approvals: ApprovalGate;
  vault: Vault;
  /** Learns each secret value as it is read, and masks tool output with it. */
  redactor: SecretRedactor;
  /** Config `tools`. */
  settings: Config["tools"];
  /** Resolves each agent's sandbox policy for the tools that start children or reach the network. */
  sandbox: SandboxHost;
  logger: Logger;
  /** How long a tool gets to end by itself once its run is stopped (default 5 s). */
  abandonAfterMilliseconds?: number;
  /** Runs the agents' `before_tool` and `after_tool` hooks; without it no hook runs. */
  hooks?: ToolHooks;
}

/**
 * The one path of every tool call (SPEC 4): the agent must list the tool → arguments parsed by the
 * tool's schema → only the agent's own secrets → capability mode → permission (deny / ask / allow)
 * → `before_tool` hooks (may deny) → approval for `ask` → `{{secret:name}}` substituted just before
 * execution → execution with the run's signal → redaction → size cap → `action` and `observation`
 * events → `after_tool` hooks. A refusal at any step is a tool error
 * the model reads, never a crash of the run; a stop while waiting or running ends the run.
 */
export class DefaultToolExecutor implements ToolExecutor {
  readonly #options: DefaultToolExecutorOptions;
  /** Definitions whose missing tools were already logged (once per definition, not per call). */
  readonly #warnedMissing = new WeakSet<AgentDefinition>();
  /** Tools approved "for the rest of this run", per run. */
  readonly #approvedForRun = new WeakMap<RunControl, Set<string>>();
  /** Each tool's spec as the model reads it, masked, and how many forms the redactor knew then. */
  readonly #maskedSpecs = new WeakMap<ToolDefinition, { known: number; spec: Omit<ToolSpec, "name"> }>();

  constructor(options: DefaultToolExecutorOptions) {
    this.#options = options;
  }

  async specs(definition: AgentDefinition, signal?: AbortSignal): Promise<ToolSpec[]> {
    const tools = await this.#agentTools(definition, signal);
    return [...tools.entries()].map(([name, tool]) => ({ name, ...this.#maskedSpec(tool) }));
  }

  /**
   * A tool's description and parameters with vault values masked: they are texts the model reads
   * that an operator (a sub-agent's `description`) or an MCP server wrote. Masked once per tool
   * while the redactor learns nothing new, not at every run.
   */
  #maskedSpec(tool: ToolDefinition): Omit<ToolSpec, "name"> {
    const { redactor } = this.#options;
    const known = this.#maskedSpecs.get(tool);
    if (known !== undefined && known.known === redactor.size) return known.spec;
    const spec = redactor.redactValue({ description: tool.description, parameters: tool.parameters });
    this.#maskedSpecs.set(tool, { known: redactor.size, spec });
    return spec;
  }

  async execute(call: ToolCall, scope: ToolRunScope): Promise<ToolResult> {
    const started = performance.now();
    const input = parseJson(call.argumentsJson);
    const listed = listedTool(call.tool, offeredNames(scope.definition));
    // Events name the tool as the agent file does (`mcp:github/create_issue`).
    const toolName = listed?.name ?? call.tool;
    scope.events.publish({
      agent: scope.definition.id,
      run: scope.runId,
      type: "action",
      data: { call_id: call.callId, tool: toolName, arguments: input.ok ? input.value : call.argumentsJson },
    });
    // Time spent waiting for an approval or a resume is not the tool's: durations leave it out.
    const timing = { waitedMilliseconds: 0, ran: false };
    const output = await this.#attempt(call, listed, input, scope, timing);
    const capped = maskedCappedOutput(
      output.output,
      this.#options.settings.max_output_bytes,
      this.#options.redactor,
    );
    const truncated = capped.truncated || output.truncated === true;
    const result: ToolResult = {
      ok: output.ok,
      output: capped.text,
      ...(output.code === undefined ? {} : { code: output.code }),
      ...(truncated ? { truncated } : {}),
    };
    scope.events.publish({
      agent: scope.definition.id,
      run: scope.runId,
      type: "observation",
      data: {
        call_id: call.callId,
        tool: toolName,
        ok: result.ok,
        output: result.output,
        duration_ms: Math.round(performance.now() - started - timing.waitedMilliseconds),
        ...(truncated ? { truncated } : {}),
      },
    });
    if (timing.ran && this.#options.hooks && scope.definition.hooks.length > 0) {
      await this.#options.hooks.afterTool(
        { callId: call.callId, tool: toolName, input: input.ok ? input.value : call.argumentsJson },
        result,
        hookScope(scope),
      );
    }
    return result;
  }

  async #attempt(
    call: ToolCall,
    listed: ListedTool | undefined,
    input: { ok: true; value: unknown } | { ok: false; message: string },
    scope: ToolRunScope,
    timing: { waitedMilliseconds: number; ran: boolean },
  ): Promise<ToolOutput> {
    const { definition, control } = scope;
    const notAvailable = refusal(
      "TOOL_NOT_FOUND",
      `tool "${call.tool}" is not available to this agent; use one of the tools you were given`,
    );
    if (!listed) return notAvailable;
    // A built-in is found at once (nearly every call); any other tool is asked of the source that
    // offers it, and a stop does not wait for a server that is starting.
    let tool = listed.entry.endsWith("/*") ? undefined : this.#options.catalog.builtin?.(listed.entry);
    if (!tool) {
      try {
        tool = await settleOrAbandon(this.#find(listed, call.tool, control.signal), control.signal, 0);
      } catch (error) {
        if (control.signal.aborted) throw control.signal.reason;
        const failure = toAgentdError(error, "TOOL_FAILED");
        return { ok: false, code: failure.code, output: failure.describe() };
      }
    }
    if (!tool) return notAvailable;
    if (tool.load) await tool.load();
    if (!input.ok) return refusal("TOOL_BAD_ARGUMENTS", `the arguments are not valid JSON: ${input.message}`);
    const parsed = tool.parse(input.value);
    if (!parsed.ok)
      return refusal("TOOL_BAD_ARGUMENTS", `invalid arguments for ${tool.name}: ${parsed.message}`);
    const context: ToolContext = {
      workdir: definition.workdir,
      sandbox: this.#options.sandbox.policyFor({
        settings: definition.sandbox,
        workdir: definition.workdir,
        owner: `agent "${definition.id}"`,
        hookCommands: definition.hooks.map((hook) => hook.command),
      }),
      signal: scope.signal ?? control.signal,
      settings: this.#options.settings,
      run: scope,
      callId: call.callId,
      pathAllowed: (relativePath) => !restrictedByPattern(definition.permissions, tool.name, relativePath),
      redactPiece: (text, cutAt) => {
        const { redactor } = this.#options;
        const whole = redactor.redact(text);
        return cutAt === "end" ? redactor.redactCutEnd(whole) : redactor.redactCutStart(whole);
      },
    };
    try {
      const secrets = injectSecrets(parsed.value, tool, definition);
      const limited = capabilityRefusal(definition.capabilities, tool.name, parsed.value);
      if (limited !== undefined) return refusal("TOOL_DENIED", limited);
      const verdict = checkPermission(
        definition.permissions,
        tool.name,
        tool.subject(parsed.value, context),
        {
          unlisted: tool.allowedWhenUnlisted ? "allow" : "ask",
        },
      );
      if (verdict.decision === "deny") {
        return refusal("TOOL_DENIED", `${tool.name} call denied (${verdict.reason}); do not retry it`);
      }
      const waitStarted = performance.now();
      // Nothing of the call starts (its before_tool hook included) while the run is held. Each
      // wait below is awaited only when there is something to wait for (a hold, a stop, a hook, a
      // secret): a call with none goes on in the same turn, as the loop's rounds do.
      if (mustWait(control)) await control.waitWhilePaused();
      // The agent's hooks are config's and its own: none (nearly always), nothing to ask.
      const hooks = definition.hooks.length === 0 ? undefined : this.#options.hooks;
      const hookDenial =
        hooks === undefined
          ? undefined
          : await hooks.beforeTool(
              { callId: call.callId, tool: listed.name, input: parsed.value },
              hookScope(scope),
            );
      if (hookDenial !== undefined) {
        return refusal("TOOL_DENIED", `${tool.name} call denied by a before_tool hook: ${hookDenial}`);
      }
      if (verdict.decision === "ask" && !this.#approvedForRun.get(control)?.has(tool.name)) {
        const denial = await this.#askApproval(tool.name, input.value, verdict.reason, scope, call.callId);
        timing.waitedMilliseconds = performance.now() - waitStarted;
        if (denial) return denial;
      }
      // A run paused while the call waited for its answer runs it only once resumed.
      if (mustWait(control)) await control.waitWhilePaused();
      timing.waitedMilliseconds = performance.now() - waitStarted;
      const ready =
        secrets.names.length === 0
          ? parsed.value
          : await secrets.resolve(this.#options.vault, this.#options.redactor);
      // A stop or a hold (a lapsed lease) that raced the approval or the vault read: the call
      // must not start; nothing is awaited between this check and the call.
      if (mustWait(control)) await control.waitWhilePaused();
      timing.ran = true;
      return await settleOrAbandon(
        tool.run(ready, context),
        control.signal,
        this.#options.abandonAfterMilliseconds,
      );
    } catch (error) {
      if (control.signal.aborted) throw control.signal.reason;
      const failure = toAgentdError(error, "TOOL_FAILED");
      if (failure.code === "TOOL_FAILED" || failure.code === "INTERNAL") {
        loggerInScope(this.#options.logger, scopeOfSignal(scope.signal)).warn(
          { run: scope.runId, tool: call.tool, err: failure },
          "tool failed",
        );
      }
      return { ok: false, code: failure.code, output: failure.describe() };
    }
  }

  /** Parks the run in `waiting` until the call is answered; returns the refusal when it is not approved. */
  async #askApproval(
    tool: string,
    argumentsAsWritten: unknown,
    reason: string,
    scope: ToolRunScope,
    callId: string,
  ): Promise<ToolOutput | undefined> {
    const { definition, control } = scope;
    await control.waitWhilePaused();
    // The run is recorded waiting before the approval is listed.
    await scope.setStatus("waiting");
    let answer;
    try {
      answer = await this.#options.approvals.request({
        agent: definition.id,
        run: scope.runId,
        tool,
        arguments: argumentsAsWritten,
        reason,
        policy: definition.approvals,
        signal: control.signal,
        events: scope.events,
        callId,
      });
    } finally {
      if (!control.signal.aborted) void scope.setStatus("running");
    }
    if (answer.approved) {
      if (answer.scope === "run") {
        const approved = this.#approvedForRun.get(control) ?? new Set<string>();
        approved.add(tool);
        this.#approvedForRun.set(control, approved);
      }
      return undefined;
    }
    const how = answer.state === "expired" ? "the approval request expired" : "a human denied it";
    return refusal("TOOL_DENIED", `${tool} call not approved: ${how}; do not retry it`);
  }

  /** The tool a listed entry offers under the name the model called. */
  async #find(
    listed: ListedTool,
    calledName: string,
    signal: AbortSignal,
  ): Promise<ToolDefinition | undefined> {
    if (!listed.entry.endsWith("/*")) return this.#options.catalog.find(listed.entry, signal);
    const { tools } = await this.#options.catalog.expand([listed.entry], signal);
    return tools.find((tool) => tool.name === listed.name || modelToolName(tool.name) === calledName);
  }

  /**
   * The tools an agent offers the model, resolved for each run rather than cached: a tool an MCP
   * server added reaches agents whose file did not change. Built-ins are a map lookup and MCP
   * listings are cached by their sessions, so this stays cheap.
   */
  async #agentTools(definition: AgentDefinition, signal?: AbortSignal): Promise<Map<string, ToolDefinition>> {
    const { tools: found, missing } = await this.#options.catalog.expand(offeredNames(definition), signal);
    if (missing.length > 0 && !this.#warnedMissing.has(definition)) {
      this.#warnedMissing.add(definition);
      this.#options.logger.warn(
        { agent: definition.id, missing },
        "the agent lists tools that no built-in or MCP server offers; they are left out",
      );
    }
    return new Map(found.map((tool) => [modelToolName(tool.name), tool]));
  }
}

/** The tool names an agent offers: its `tools` list, an `agent__<id>` per sub-agent, then `notify`. */
function offeredNames(definition: AgentDefinition): string[] {
  const notify = definition.offersNotify === true && definition.capabilities !== "no-tools" ? ["notify"] : [];
  return [...definition.frontmatter.tools, ...definition.frontmatter.agents.map(agentToolName), ...notify];
}

/** The run as its hooks see it: a stop ends a tool hook too; the call's signal names its span. */
function hookScope(scope: ToolRunScope) {
  return {
    runId: scope.runId,
    definition: scope.definition,
    events: scope.events,
    signal: scope.signal ?? scope.control.signal,
  };
}

/** Whether `waitWhilePaused` has anything to do: the run is stopped (it throws) or held (it waits). */
function mustWait(control: RunControl): boolean {
  return control.signal.aborted || control.halted;
}

function refusal(code: ErrorCode, output: string): ToolOutput {
  return { ok: false, code, output };
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  if (text.trim() === "") return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}
