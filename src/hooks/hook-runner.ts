import { performance } from "node:perf_hooks";
import { loggerInScope, scopeOfSignal, traceContextEnvironment } from "../telemetry/trace-scope.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { Logger } from "../logging/logger.js";
import type { SandboxHost } from "../sandbox/sandbox-host.js";
import type { SecretRedactor } from "../secrets/secret-redactor.js";
import { withDeadline } from "../run-vocabulary/abort-ending.js";
import { runShellCommand } from "../tools/builtin/run-shell-command.js";
import { ensureWorkdir } from "../tools/workdir/confine-path.js";
import type { HookRunScope, HookToolCall, HookToolResponse, ToolHooks } from "../tools/tool-hooks.js";
import type { RunOutcome } from "../run-vocabulary/run-outcome.js";
import type { HookInput } from "./hook-input.js";
import { hookInputBase } from "./hook-input.js";
import type { HookPoint } from "../config/hook-settings.js";
import { HOOK_MESSAGE_BYTES, type HookVerdict, hookVerdict } from "./hook-verdict.js";
import { type ResolvedHook, hookAppliesTo } from "./resolved-hook.js";

export interface HookRunnerOptions {
  /** The daemon's sandbox: each hook runs in its agent's sandbox policy, like a shell call. */
  sandbox: SandboxHost;
  /** Masks secret values in the hook's stdin and in what its stderr says. */
  redactor: SecretRedactor;
  logger: Logger;
}

/**
 * Runs an agent's hooks (config `hooks:` first, then its own) at `before_tool`, `after_tool` and
 * `on_run_end`: each as `bash -c <command>` in the agent's workdir and sandbox, with its JSON
 * document on stdin and its timeout. Every hook that runs leaves a `hook` event; a failing one is
 * also logged. Nothing a hook does throws: a run never fails because of a hook.
 */
export class HookRunner implements ToolHooks {
  readonly #options: HookRunnerOptions;

  constructor(options: HookRunnerOptions) {
    this.#options = options;
  }

  /** Runs the `before_tool` hooks in order; the first denial stops there and returns its reason. */
  async beforeTool(call: HookToolCall, scope: HookRunScope): Promise<string | undefined> {
    for (const hook of hooksAt(scope.definition, "before_tool", call.tool)) {
      const verdict = await this.#run(hook, scope, call, {
        ...hookInputBase("before_tool", scope.runId, scope.definition),
        hook_event_name: "before_tool",
        tool_name: call.tool,
        tool_use_id: call.callId,
        tool_input: call.input,
      });
      if (verdict.outcome === "denied") return verdict.reason;
    }
    return undefined;
  }

  /** Runs the `after_tool` hooks with the call's result (already masked and capped). */
  async afterTool(call: HookToolCall, response: HookToolResponse, scope: HookRunScope): Promise<void> {
    for (const hook of hooksAt(scope.definition, "after_tool", call.tool)) {
      await this.#run(hook, scope, call, {
        ...hookInputBase("after_tool", scope.runId, scope.definition),
        hook_event_name: "after_tool",
        tool_name: call.tool,
        tool_use_id: call.callId,
        tool_input: call.input,
        tool_response: response,
      });
    }
  }

  /** Runs the `on_run_end` hooks with how the run ended. */
  async runEnded(outcome: RunOutcome, scope: HookRunScope): Promise<void> {
    for (const hook of hooksAt(scope.definition, "on_run_end")) {
      await this.#run(hook, scope, undefined, {
        ...hookInputBase("on_run_end", scope.runId, scope.definition),
        hook_event_name: "on_run_end",
        status: outcome.status,
        ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
        ...(outcome.result === undefined ? {} : { result: outcome.result }),
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
      });
    }
  }

  async #run(
    hook: ResolvedHook,
    scope: HookRunScope,
    call: HookToolCall | undefined,
    input: HookInput,
  ): Promise<HookVerdict> {
    const { definition } = scope;
    const { redactor } = this.#options;
    const started = performance.now();
    let verdict: HookVerdict;
    try {
      const result = await runShellCommand({
        command: hook.command,
        workdir: ensureWorkdir(definition.workdir),
        // The tool call's (or the run's) span: a hook that traces joins the run's trace.
        environment: traceContextEnvironment(scope.runSignal ?? scope.signal),
        sandbox: this.#options.sandbox.policyFor({
          settings: definition.sandbox,
          workdir: definition.workdir,
          owner: `agent "${definition.id}"`,
          hookCommands: definition.hooks.map((hook) => hook.command),
        }),
        maxOutputBytes: HOOK_MESSAGE_BYTES,
        // The hook's one deadline: the run's signal (when it has one) and the hook's own timeout.
        signal: withDeadline(scope.signal, hook.timeout),
        // Masked as a value, not as text: a secret is replaced before JSON escapes it.
        input: `${JSON.stringify(redactor.redactValue(input))}\n`,
      });
      verdict = hookVerdict(hook.point, result, hook.timeout, (text, cutAt) => {
        const whole = redactor.redact(text);
        return cutAt === "end" ? redactor.redactCutEnd(whole) : redactor.redactCutStart(whole);
      });
    } catch (error) {
      // SANDBOX_UNAVAILABLE, a workdir that cannot be made: the hook could not start.
      verdict = {
        outcome: "failed",
        message: `the hook could not be started: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    const message =
      verdict.outcome === "denied"
        ? verdict.reason
        : verdict.outcome === "failed"
          ? verdict.message
          : undefined;
    if (verdict.outcome === "failed") {
      // A tool hook's line names its call's span (found by the call's signal).
      loggerInScope(this.#options.logger, scopeOfSignal(scope.signal)).warn(
        {
          run: scope.runId,
          agent: definition.id,
          hook: hook.point,
          command: hook.command,
          code: "HOOK_FAILED",
          message,
        },
        "hook failed",
      );
    }
    scope.events.publish({
      agent: definition.id,
      run: scope.runId,
      type: "hook",
      data: {
        hook: hook.point,
        command: hook.command,
        outcome: verdict.outcome,
        duration_ms: Math.round(performance.now() - started),
        ...(call === undefined ? {} : { call_id: call.callId, tool: call.tool }),
        ...(verdict.exitCode === undefined ? {} : { exit_code: verdict.exitCode }),
        ...(message === undefined ? {} : { message: redactor.redact(message) }),
        ...(verdict.outcome === "failed" ? { code: "HOOK_FAILED" as const } : {}),
      },
    });
    return verdict;
  }
}

function hooksAt(definition: AgentDefinition, point: HookPoint, tool?: string): ResolvedHook[] {
  return definition.hooks.filter((hook) => hook.point === point && hookAppliesTo(hook, tool));
}
