import { z } from "zod";
import { checkCliFlags } from "./cli-flags.js";
import { ConfigRetentionSchema } from "./retention-settings.js";
import { TelemetrySettingsSchema } from "./telemetry-settings.js";
import { checkServerSettings } from "./check-server-settings.js";
import { ConfigHooksSchema } from "./hook-settings.js";
import { DeliveriesConfigSchema } from "./delivery-settings.js";
import { TriggersConfigSchema } from "./trigger-settings.js";
import { SandboxOverrideSchema, SandboxSettingsSchema } from "./sandbox-settings.js";
import { DurationSchema } from "../util/duration.js";
import { SecureCookiesSchema, TrustProxySchema } from "./proxy-settings.js";

/** SPEC 1 defaults for an agent's limits, also the daemon-wide defaults. */
export const LimitsSchema = z.strictObject({
  max_iterations: z.number().int().positive().default(50),
  max_tokens: z.number().int().positive().default(100_000),
  timeout: DurationSchema.default(600_000),
  max_cost_usd: z.number().nonnegative().default(1),
  max_concurrent_runs: z.number().int().positive().default(1),
  /** How deep sub-agents may nest: a run started by the model is at depth 0, its child at 1. */
  max_agent_depth: z.number().int().nonnegative().default(3),
});
export type Limits = z.infer<typeof LimitsSchema>;

export const PermissionRulesSchema = z.strictObject({
  allow: z.array(z.string()).default([]),
  ask: z.array(z.string()).default([]),
  deny: z.array(z.string()).default([]),
});
export type PermissionRules = z.infer<typeof PermissionRulesSchema>;

export const ApprovalPolicySchema = z.strictObject({
  timeout: DurationSchema.default(600_000),
  on_timeout: z.enum(["deny", "approve"]).default("deny"),
});
export type ApprovalPolicy = z.infer<typeof ApprovalPolicySchema>;

const PriceSchema = z.strictObject({
  /** USD per million prompt tokens. */
  input: z.number().nonnegative(),
  /** USD per million completion tokens. */
  output: z.number().nonnegative(),
});

const LlmSchema = z.strictObject({
  base_url: z.string().optional(),
  api_key: z.string().optional(),
  model: z.string().default("llama3.1"),
  temperature: z.number().min(0).max(2).optional(),
  timeouts: z
    .strictObject({
      first_chunk: DurationSchema.default(60_000),
      idle: DurationSchema.default(30_000),
      call: DurationSchema.default(300_000),
    })
    .prefault({}),
  retries: z
    .strictObject({
      max_attempts: z.number().int().min(1).default(4),
      base_delay: DurationSchema.default(500),
      max_delay: DurationSchema.default(30_000),
    })
    .prefault({}),
  circuit_breaker: z
    .strictObject({
      failure_threshold: z.number().int().positive().default(5),
      cooldown: DurationSchema.default(30_000),
    })
    .prefault({}),
  context: z
    .strictObject({
      /** Estimated tokens of history above which the middle is compacted. */
      max_tokens: z.number().int().positive().default(24_000),
      /** Recent messages kept verbatim by compaction. */
      keep_recent: z.number().int().min(2).default(6),
    })
    .prefault({}),
  prices: z.record(z.string(), PriceSchema).default({}),
  /** Model names agent files use (sonnet, inherit, provider/model) → the model sent to the endpoint. */
  model_aliases: z.record(z.string(), z.string().min(1)).default({}),
});

const CliToolSchema = z.strictObject({
  /** Executable name or path; default the entry's name (for claude, gemini, codex: the tool's). */
  command: z.string().min(1).optional(),
  /**
   * Argument template: `{task}`, `{model}`, `{workdir}`, `{system_prompt}` are replaced (default
   * `["{task}"]`). For claude, gemini and codex: default arguments added to the built-in ones.
   */
  args: z.array(z.string()).optional(),
  /** `text` (stdout is the result) or the name of a built-in adapter's format. */
  output: z.enum(["text", "claude", "gemini", "codex"]).default("text"),
  env: z.record(z.string(), z.string()).default({}),
});
export type CliToolConfig = z.infer<typeof CliToolSchema>;

const McpServerSchema = z.union([
  z.strictObject({
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    /** Over config `sandbox`; relative paths are relative to the config file's folder. */
    sandbox: SandboxOverrideSchema.optional(),
  }),
  z.strictObject({
    url: z.string().url(),
    headers: z.record(z.string(), z.string()).default({}),
  }),
]);
export type McpServerConfig = z.infer<typeof McpServerSchema>;

/** SPEC 3: the whole of `config.yaml`. Every key has a default, so an empty file is valid. */
export const ConfigSchema = z.strictObject({
  agents_dir: z.string().default("./agents"),
  /** Extra agent folders, such as a project's `.claude/agents` or `.opencode/agent`. */
  agents_dirs: z.array(z.string().min(1)).default([]),
  presets_dir: z.string().default("./presets"),
  data_dir: z.string().default("./data"),
  server: z
    .strictObject({
      host: z.string().default("127.0.0.1"),
      port: z.number().int().min(0).max(65_535).default(7070),
      token: z.string().optional(),
      /** `token` (default: server.token, else a token generated into `<data_dir>/api.token`) or `none`, loopback only. */
      auth: z.enum(["token", "none"]).default("token"),
      /** Host names besides the bind address, localhost and loopback addresses (`*.example.com` allowed; `*` not with auth: none). */
      allowed_hosts: z.array(z.string().min(1)).default([]),
      /** Web origins (`https://tools.example.com`) allowed to send state-changing requests; no `*`, no `null`. */
      allowed_origins: z.array(z.string().min(1)).default([]),
      /** Proxies whose X-Forwarded-For/-Proto/-Host count: false (none), addresses/CIDRs, a hop count, true (any). */
      trust_proxy: TrustProxySchema.default(false),
      /** Session cookie's Secure flag: `auto` (over https, a trusted proxy's X-Forwarded-Proto counting), `always`, `never`. */
      secure_cookies: SecureCookiesSchema.default("auto"),
    })
    .superRefine(checkServerSettings)
    .prefault({}),
  llm: LlmSchema.prefault({}),
  cli_tools: z
    .record(z.string(), CliToolSchema)
    .default({})
    .superRefine((tools, context) => {
      // claude, gemini and codex entries add to the built-in's arguments: a typo fails every run.
      for (const [tool, entry] of Object.entries(tools)) {
        for (const problem of checkCliFlags(tool, entry.args ?? [])) {
          context.addIssue({ code: "custom", path: [tool, "args", problem.index], message: problem.message });
        }
      }
    }),
  cli: z
    .strictObject({
      /** How long a CLI tool rests after a quota or rate-limit failure when it gives no reset time. */
      cooldown: DurationSchema.default(900_000),
      /** Time between SIGTERM and SIGKILL when a CLI child is stopped. */
      kill_grace: DurationSchema.default(3_000),
    })
    .prefault({}),
  vault: z
    .strictObject({
      backend: z.enum(["file", "keychain", "env"]).default("file"),
      /** Encrypted file; default `<data_dir>/vault.json`. */
      file: z.string().optional(),
      /** Key file used when AGENTD_VAULT_KEY is unset; default `<data_dir>/vault.key`. */
      key_file: z.string().optional(),
      /** Keychain service name. */
      service: z.string().default("agentd"),
    })
    .prefault({}),
  mcp_servers: z.record(z.string(), McpServerSchema).default({}),
  /** The OS sandbox of every child an agent causes (shell, CLI workers, stdio MCP servers). */
  sandbox: SandboxSettingsSchema.prefault({}),
  limits: LimitsSchema.prefault({}),
  permissions: PermissionRulesSchema.prefault({}),
  approvals: ApprovalPolicySchema.prefault({}),
  tools: z
    .strictObject({
      max_output_bytes: z.number().int().positive().default(32_768),
      shell_timeout: DurationSchema.default(120_000),
      http_timeout: DurationSchema.default(30_000),
      http_max_bytes: z.number().int().positive().default(1_048_576),
    })
    .prefault({}),
  concurrency: z.number().int().positive().default(4),
  scheduler: z
    .strictObject({
      /** Under `overlap: queue`, fires queued behind a running run at most; more are `skipped`. */
      queue_limit: z.number().int().positive().default(10),
    })
    .prefault({}),
  /** Default of agents' `resume:`: continue runs cut off by a crash or a shutdown at the next start. */
  resume: z.boolean().default(false),
  /** Commands run at every agent's before_tool, after_tool and on_run_end, before the agent's own. */
  hooks: ConfigHooksSchema.prefault({}),
  events: z.strictObject({ buffer_size: z.number().int().positive().default(200) }).prefault({}),
  /** How much run history is kept (SPEC 10); agent files may override it key by key. */
  retention: ConfigRetentionSchema.prefault({}),
  /** Where durable state lives: files in data_dir, or PostgreSQL shared by several daemons. */
  store: z
    .strictObject({
      backend: z.enum(["files", "postgres"]).default("files"),
      /** `postgres://user:password@host:5432/database`; `${VAR}` and `{{secret:name}}` work. */
      url: z.string().optional(),
      /** How soon another node ends the runs of a node that stopped renewing its lease. */
      lease: DurationSchema.default(30_000),
      /** While the store is full, how often a small write checks whether space has returned. */
      probe_interval: DurationSchema.default(5_000),
    })
    .superRefine((store, context) => {
      if (store.backend === "postgres" && !store.url) {
        context.addIssue({
          code: "custom",
          path: ["url"],
          message: "store.backend: postgres needs store.url",
        });
      }
    })
    .prefault({}),
  log: z
    .strictObject({
      level: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
      /** true, false, or auto (pretty on a TTY). */
      pretty: z.union([z.boolean(), z.literal("auto")]).default("auto"),
    })
    .prefault({}),
  shutdown: z.strictObject({ grace: DurationSchema.default(30_000) }).prefault({}),
  /** OpenTelemetry traces (docs/telemetry.md); off unless set here or by the OTEL_* variables. */
  telemetry: TelemetrySettingsSchema.prefault({}),
  /** Shared delivery targets by name, the SMTP server of email targets (SPEC 10, docs/deliveries.md). */
  deliveries: DeliveriesConfigSchema.prefault({}),
  /** What applies to every agent's triggers: the webhook body limit (docs/triggers.md). */
  triggers: TriggersConfigSchema.prefault({}),
});

export type Config = z.infer<typeof ConfigSchema>;
