import { z } from "zod";
import { ApprovalPolicySchema, PermissionRulesSchema } from "../config/config-schema.js";
import { AgentHooksSchema } from "../config/hook-settings.js";
import { SandboxOverrideSchema } from "../config/sandbox-settings.js";
import { RetentionSettingsSchema } from "../config/retention-settings.js";
import { DeliverListSchema } from "../config/delivery-settings.js";
import { DurationSchema } from "../util/duration.js";
import { cronFor } from "../scheduler/cron-patterns.js";
import { TriggersSchema } from "../triggers/trigger-schema.js";
import { MemoryFrontmatterSchema, RunContextSchema } from "../memory/memory-settings.js";

/**
 * Validates a cron expression with croner (5 or 6 fields), and a timezone when given. `path` places
 * the issue (the `cron` key of the object form).
 */
function checkCron(
  expression: string,
  timezone: string | undefined,
  context: z.RefinementCtx,
  path: PropertyKey[] = [],
): void {
  const fields = expression.trim().split(/\s+/).length;
  if (fields < 5 || fields > 6) {
    context.addIssue({
      code: "custom",
      path,
      message: `cron "${expression}" has ${fields} fields; write 5 (or 6 with seconds)`,
    });
    return;
  }
  const problem = cronProblem(expression, timezone);
  if (problem !== undefined) {
    context.addIssue({ code: "custom", path, message: `invalid cron "${expression}": ${problem}` });
  }
}

/**
 * Checking a cron expression or a timezone builds a Cron or an Intl.DateTimeFormat, which costs
 * far more than the rest of an agent's validation; 1,000 agents share a handful of each, so the
 * verdicts are remembered (bounded, since the inputs come from users' files).
 */
const verdicts = new Map<string, string | undefined>();
const MAX_VERDICTS = 10_000;

function remembered(key: string, check: () => string | undefined): string | undefined {
  if (verdicts.has(key)) return verdicts.get(key);
  const verdict = check();
  if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
  verdicts.set(key, verdict);
  return verdict;
}

function cronProblem(expression: string, timezone: string | undefined): string | undefined {
  return remembered(`cron\u0000${expression}\u0000${timezone ?? ""}`, () => {
    try {
      // Kept: the scheduler asks the same pattern for this agent's fire times.
      cronFor({ cron: expression, timezone });
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  });
}

function checkTimezone(timezone: string, context: z.RefinementCtx): void {
  const problem = remembered(`timezone\u0000${timezone}`, () => {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: timezone });
      return undefined;
    } catch {
      return "unknown";
    }
  });
  if (problem !== undefined) {
    context.addIssue({
      code: "custom",
      path: ["timezone"],
      message: `unknown timezone "${timezone}" (use an IANA name such as Europe/Berlin)`,
    });
  }
}

const ScheduleObjectSchema = z
  .strictObject({
    cron: z.string().min(1),
    timezone: z.string().optional(),
    task: z.string().optional(),
    on_missed: z.enum(["run_once", "skip"]).default("run_once"),
    overlap: z.enum(["skip", "queue"]).default("skip"),
  })
  .superRefine((schedule, context) => {
    if (schedule.timezone) checkTimezone(schedule.timezone, context);
    checkCron(schedule.cron, undefined, context, ["cron"]);
  });

/** `schedule:` is a cron string or an object; both become the object form. */
export const ScheduleSchema = z.union([
  z
    .string()
    .superRefine((cron, context) => checkCron(cron, undefined, context))
    .transform((cron) => ScheduleObjectSchema.parse({ cron })),
  ScheduleObjectSchema,
]);
export type Schedule = z.infer<typeof ScheduleObjectSchema>;

const CliSettingsSchema = z.strictObject({
  tool: z.string().min(1),
  /** The CLI's own model; `model` / `fallback_models` are the fallback LLM's. */
  model: z.string().min(1).optional(),
  args: z.array(z.string()).default([]),
  fallback: z.enum(["llm", "none"]).default("llm"),
  // Progress (model text, tool events), not retry noise, resets it: 2m ends a CLI that only
  // reconnects to an unreachable server well before the run's timeout.
  idle_timeout: DurationSchema.default(120_000),
});
export type CliSettings = z.infer<typeof CliSettingsSchema>;

const AgentLimitsSchema = z.strictObject({
  max_iterations: z.number().int().positive().optional(),
  max_tokens: z.number().int().positive().optional(),
  timeout: DurationSchema.optional(),
  max_cost_usd: z.number().nonnegative().optional(),
  max_concurrent_runs: z.number().int().positive().optional(),
  max_agent_depth: z.number().int().nonnegative().optional(),
});

/** `full` (default), `read-only` (no tool that writes, read-only sandbox) or `no-tools`. */
export const CapabilityModeSchema = z.enum(["full", "read-only", "no-tools"]);
export type CapabilityMode = z.infer<typeof CapabilityModeSchema>;

/**
 * SPEC 1: the frontmatter of `agents/<id>.md`. Unknown top-level keys are tolerated (reported as
 * warnings by the loader, since other tools' agent files must load); nested objects are strict.
 */
export const AgentFrontmatterSchema = z
  .object({
    name: z.string().min(1).optional(),
    description: z
      .string({ error: "description is required: one line saying what the agent does" })
      .trim()
      .min(1, "description must not be empty"),
    preset: z.string().min(1).optional(),
    worker: z.enum(["llm", "cli"]).default("llm"),
    model: z.string().min(1).optional(),
    fallback_models: z.array(z.string().min(1)).default([]),
    temperature: z.number().min(0).max(2).optional(),
    cli: CliSettingsSchema.optional(),
    workdir: z.string().min(1).optional(),
    tools: z.array(z.string().min(1)).default([]),
    /** Other agents offered to the model as `agent__<id>` tools (sub-agents). */
    agents: z.array(z.string().regex(/^[a-z0-9_-]+$/, "agent ids use a-z, 0-9, _ and -")).default([]),
    permissions: PermissionRulesSchema.optional(),
    secrets: z
      .array(z.string().regex(/^[A-Za-z0-9_.-]+$/, "secret names use letters, digits, _ . -"))
      .default([]),
    schedule: ScheduleSchema.optional(),
    // No defaults here: a field the agent leaves out falls back to config `approvals`.
    approvals: z
      .strictObject({
        timeout: ApprovalPolicySchema.shape.timeout.unwrap().optional(),
        on_timeout: ApprovalPolicySchema.shape.on_timeout.unwrap().optional(),
      })
      .optional(),
    task: z.string().optional(),
    limits: AgentLimitsSchema.optional(),
    enabled: z.boolean().default(true),
    /** Over config `sandbox`; `sandbox: off` runs this agent's children without the OS sandbox. */
    sandbox: SandboxOverrideSchema.optional(),
    /** Resume a run cut off by a crash or a shutdown from its last checkpoint; default config `resume`. */
    resume: z.boolean().optional(),
    /** Commands run at before_tool, after_tool and on_run_end, after config `hooks`. */
    hooks: AgentHooksSchema.optional(),
    /** How much of this agent's run history is kept, over config `retention`, key by key. */
    retention: RetentionSettingsSchema.optional(),
    capabilities: CapabilityModeSchema.default("full"),
    /** Webhooks, other agents' run ends and watched folders that start a run (src/triggers/). */
    triggers: TriggersSchema.default([]),
    /** Where each run's outcome is sent (SPEC 10, docs/deliveries.md). */
    deliver: DeliverListSchema,
    /** Memory across runs (src/memory): `none` (absent), `read`, `write`, or `{ mode, scope, max_chars }`. */
    memory: MemoryFrontmatterSchema.optional(),
    /** `{ last_runs: N }`: the agent's last N runs shown in its system prompt (src/memory). */
    context: RunContextSchema.optional(),
  })
  .superRefine((agent, context) => {
    if (agent.worker === "cli" && !agent.cli) {
      context.addIssue({
        code: "custom",
        path: ["cli"],
        message: "worker: cli needs a cli: section with at least tool:",
      });
    }
  });
export type AgentFrontmatter = z.infer<typeof AgentFrontmatterSchema>;

/** The id rule of SPEC 1: the file name without `.md`. */
export const AGENT_ID_PATTERN = /^[a-z0-9_-]+$/;
