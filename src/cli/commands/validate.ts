import path from "node:path";
import type { Command } from "commander";
import { loadConfig } from "../../config/load-config.js";
import { secretsOnCommandLines } from "../../secrets/secrets-on-command-lines.js";
import type { AgentStatus, DefinitionSnapshot, PresetStatus } from "../../definitions/definition-snapshot.js";
import { loadDefinitions } from "../../definitions/load-definitions.js";
import { toAgentdError } from "../../errors/agentd-error.js";
import { SandboxHost } from "../../sandbox/sandbox-host.js";
import { agentSandboxView } from "../../sandbox/sandbox-view.js";
import { didYouMean } from "../../schema/known-keys.js";
import { hiddenExecutableWarnings } from "../../workers/cli/cli-executable-check.js";
import { type AgentSandboxReport, formatSandboxView } from "./sandbox-view-text.js";
import { type SandboxStatus, describeSandboxStatus, sandboxStatus } from "../../sandbox/sandbox-status.js";
import { EXIT_FAILURE, EXIT_OK, type GlobalOptions } from "../output.js";
import { checkProjectTriggers } from "./validate-triggers.js";
import { createVault } from "../../vault/create-vault.js";
import { missingDeliverySecrets } from "../../deliveries/missing-delivery-secrets.js";
import { vaultMasking } from "../vault-masking.js";

type ErrorJson = Record<string, unknown>;

/** What `agentd validate --json` prints: one object, errors as AgentdError.toJSON(). */
export interface ValidationReport {
  ok: boolean;
  agents: Array<{ id: string; file: string; valid: boolean; errors: ErrorJson[]; warnings: string[] }>;
  presets: Array<{ name: string; file: string; valid: boolean; errors: ErrorJson[] }>;
  config: { file: string | null; valid: boolean; errors: ErrorJson[] };
  /** Whether the OS sandbox works on this machine (absent when the config is invalid). */
  sandbox?: SandboxStatus;
  /** With `--sandbox <agent>`: what that agent's sandboxed children see. */
  sandbox_view?: AgentSandboxReport;
  /** Why vault values quoted in the errors and warnings are not masked: the vault could not be read. */
  vault_problem?: string;
}

export interface ValidateOptions {
  config?: string | undefined;
  json?: boolean | undefined;
  /** An agent id: also report what its sandbox shows, hides and lets it write. */
  sandbox?: string | undefined;
  cwd?: string;
  environment?: NodeJS.ProcessEnv;
}

/**
 * Checks the config, every preset and every agent, offline. With an invalid config the folders
 * are not checked: where they are and what they may refer to depends on it.
 */
export async function validateProject(
  options: ValidateOptions,
): Promise<{ report: ValidationReport; configWarnings: string[] }> {
  const cwd = options.cwd ?? process.cwd();
  let loaded;
  try {
    loaded = loadConfig({
      file: options.config,
      cwd,
      ...(options.environment ? { environment: options.environment } : {}),
    });
  } catch (error) {
    const agentdError = toAgentdError(error, "CONFIG_INVALID");
    const file = agentdError.file ?? path.resolve(cwd, options.config ?? "config.yaml");
    return {
      report: {
        ok: false,
        agents: [],
        presets: [],
        config: { file, valid: false, errors: [agentdError.toJSON()] },
      },
      configWarnings: [],
    };
  }
  const snapshot = await loadDefinitions(loaded.config);
  // Validating changes nothing: the folders a sandbox needs made are made where one is prepared.
  const sandbox = new SandboxHost({
    config: loaded.config,
    configFile: loaded.file,
    ...(options.environment ? { environment: options.environment } : {}),
    prepares: false,
  });
  const agents = await checkProjectTriggers(snapshot, snapshot.agents.map(agentEntry), {
    config: loaded.config,
    sandbox,
    environment: options.environment,
  });
  // Deliveries whose `{{secret:…}}` the vault lacks would fail at every run: the agent is reported.
  const vault = createVault(loaded.config, options.environment ?? process.env);
  for (const [index, status] of snapshot.agents.entries()) {
    const entry = agents[index];
    if (!status.definition || !entry) continue;
    const missing = await missingDeliverySecrets(status.definition, vault);
    if (missing.length > 0)
      agents[index] = {
        ...entry,
        valid: false,
        errors: [...entry.errors, ...missing.map((error) => error.toJSON())],
      };
  }
  const presets = snapshot.presets.map(presetEntry);
  const ok = agents.every((agent) => agent.valid) && presets.every((preset) => preset.valid);
  for (const agent of snapshot.agents) {
    if (!agent.definition) continue;
    const warnings = hiddenExecutableWarnings(agent.definition, loaded.config, sandbox, options.environment);
    agents.find((entry) => entry.id === agent.id && entry.file === agent.file)?.warnings.push(...warnings);
  }
  // An error or a warning may quote an agent file, and the file a secret's value: masked as the
  // daemon's API masks it.
  const masking = await vaultMasking(loaded.config, snapshot, options.environment ?? process.env);
  return {
    report: {
      ok,
      agents: masking.mask(agents),
      presets: masking.mask(presets),
      config: { file: loaded.file ?? null, valid: true, errors: [] },
      sandbox: sandboxStatus(sandbox.availability(), loaded.config.sandbox.mode),
      ...(options.sandbox === undefined
        ? {}
        : { sandbox_view: masking.mask(agentSandboxReport(options.sandbox, snapshot, sandbox)) }),
      ...(masking.problem === undefined ? {} : { vault_problem: masking.problem }),
    },
    configWarnings: [
      ...masking.mask(loaded.warnings),
      ...secretsOnCommandLines(loaded.config, loaded.file),
      ...(masking.problem === undefined ? [] : [masking.problem]),
    ],
  };
}

/** Runs `agentd validate`, writing to `write`; returns the exit code (0 all valid, 1 anything invalid). */
export async function runValidate(options: ValidateOptions, write: (text: string) => void): Promise<number> {
  const cwd = options.cwd ?? process.cwd();
  const { report, configWarnings } = await validateProject(options);
  if (options.json) write(`${JSON.stringify(report)}\n`);
  else {
    write(formatReport(report, configWarnings, cwd));
    if (report.sandbox_view) write(`\n${formatSandboxView(report.sandbox_view)}`);
  }
  const viewFailed = report.sandbox_view?.problem !== undefined;
  return report.ok && report.config.valid && !viewFailed ? EXIT_OK : EXIT_FAILURE;
}

export function registerValidateCommand(program: Command): void {
  program
    .command("validate")
    .description("check the config, every preset and every agent; exit 1 when anything is invalid")
    .option("--sandbox <agent>", "also print what that agent's sandbox lets it write, only read, and not see")
    .action(async (_options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions & { sandbox?: string }>();
      process.exitCode = await runValidate(globals, (text) => process.stdout.write(text));
    });
}

/** `--sandbox <agent>`: the view of the definition the daemon would serve for that id. */
function agentSandboxReport(id: string, snapshot: DefinitionSnapshot, host: SandboxHost): AgentSandboxReport {
  const definition = snapshot.get(id);
  if (definition === undefined) {
    const known = [...new Set(snapshot.agents.map((status) => status.id))];
    if (!known.includes(id)) {
      const suggestion = didYouMean(id, known);
      return {
        agent: id,
        view: null,
        problem: `no agent "${id}"${suggestion ? ` — did you mean "${suggestion}"?` : ""}`,
      };
    }
    return { agent: id, view: null, problem: "the agent is invalid (see above): it has no sandbox to show" };
  }
  return { agent: id, mode: definition.sandbox.mode, view: agentSandboxView(host, definition) };
}

function agentEntry(status: AgentStatus): ValidationReport["agents"][number] {
  const { id, file, valid, warnings } = status;
  return { id, file, valid, errors: status.errors.map((error) => error.toJSON()), warnings: [...warnings] };
}

function presetEntry(status: PresetStatus): ValidationReport["presets"][number] {
  const { name, file, valid } = status;
  return { name, file, valid, errors: status.errors.map((error) => error.toJSON()) };
}

/** The human form: a summary, each invalid item with `file:line field: message — hint`, then warnings. */
function formatReport(report: ValidationReport, configWarnings: readonly string[], cwd: string): string {
  const relative = (file: string) => path.relative(cwd, file) || file;
  const shorten = (text: string) => text.split(`${cwd}${path.sep}`).join("");
  const lines: string[] = [];
  const { config } = report;
  lines.push(
    `config: ${config.file ? relative(config.file) : "built-in defaults"} — ${config.valid ? "ok" : "invalid"}`,
  );
  for (const error of config.errors) lines.push(`  ${describe(error, relative)}`);
  if (!config.valid) {
    lines.push("agents and presets were not checked: fix the config first");
    return `${lines.join("\n")}\n`;
  }
  const count = (items: Array<{ valid: boolean }>) => {
    const invalid = items.filter((item) => !item.valid).length;
    return `${items.length - invalid} valid, ${invalid} invalid`;
  };
  lines.push(`presets: ${count(report.presets)}`, `agents: ${count(report.agents)}`);
  if (report.sandbox) lines.push(describeSandboxStatus(report.sandbox));
  for (const preset of report.presets.filter((item) => !item.valid)) {
    lines.push("", `✗ preset ${preset.name} (${relative(preset.file)})`);
    for (const error of preset.errors) lines.push(`  ${describe(error, relative)}`);
  }
  for (const agent of report.agents.filter((item) => !item.valid)) {
    lines.push("", `✗ agent ${agent.id} (${relative(agent.file)})`);
    for (const error of agent.errors) lines.push(`  ${describe(error, relative)}`);
  }
  const warnings = [...configWarnings, ...report.agents.flatMap((agent) => agent.warnings)];
  if (warnings.length > 0) lines.push("", "warnings:", ...warnings.map((warning) => `  ${shorten(warning)}`));
  lines.push(
    "",
    report.ok
      ? "ok: everything is valid"
      : "invalid: fix the items above (agentd validate --json for details)",
  );
  return `${lines.join("\n")}\n`;
}

/** `file:line field: message — hint`, with the file relative to the working folder. */
function describe(error: ErrorJson, relative: (file: string) => string): string {
  const file = typeof error.file === "string" ? relative(error.file) : undefined;
  const where = [file && (error.line ? `${file}:${String(error.line)}` : file), error.field]
    .filter(Boolean)
    .join(" ");
  const hint = error.hint ? ` — ${String(error.hint)}` : "";
  return `${where ? `${where}: ` : ""}${String(error.message)}${hint}`;
}
