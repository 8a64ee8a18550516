import { mkdir, mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { loadConfig } from "../../config/load-config.js";
import { toAgentdError } from "../../errors/agentd-error.js";
import { SandboxHost } from "../../sandbox/sandbox-host.js";
import { runShellCommand } from "../../tools/builtin/run-shell-command.js";
import { type ClientCommandIo, DaemonClient, processIo } from "../daemon-client.js";
import { EXIT_FAILURE, type GlobalOptions } from "../output.js";

/** How long the daemon's /health may take to answer. */
const DAEMON_TIMEOUT_MILLISECONDS = 5_000;
/** How long the sandboxed `true` may take (bubblewrap starts in well under a second). */
const SANDBOX_TIMEOUT_MILLISECONDS = 15_000;

const HealthReplySchema = z.object({
  status: z.string(),
  version: z.string(),
  reasons: z.array(z.object({ message: z.string() })).optional(),
});

/** One check's outcome, as printed and as `--json` gives it. */
interface CheckResult {
  ok: boolean;
  detail: string;
}

/**
 * `agentd health`: the container's (or a person's) check that the daemon of this config works.
 * `daemon`: its `/health` answers `ok`. `sandbox`: a shell call — `true`, through the same path and
 * bubblewrap arguments as an agent's shell tool, under config `sandbox` — runs in a fresh folder
 * of the default workspaces root (which must be writable). Exit 0 when both pass, 1 otherwise.
 */
export function registerHealthCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("health")
    .description("check that the daemon of this config answers and that a sandboxed shell call runs")
    .action(async (_options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const daemon = await checkDaemon(globals.config, io.environment);
      const sandbox = await checkSandbox(globals.config, io.environment);
      const ok = daemon.ok && sandbox.ok;
      if (globals.json) io.out(JSON.stringify({ ok, daemon, sandbox }));
      else {
        io.out(`daemon: ${daemon.ok ? "ok" : "FAILED"} — ${daemon.detail}`);
        io.out(`sandbox: ${sandbox.ok ? "ok" : "FAILED"} — ${sandbox.detail}`);
      }
      if (!ok) process.exitCode = EXIT_FAILURE;
    });
}

async function checkDaemon(
  configFile: string | undefined,
  environment: NodeJS.ProcessEnv,
): Promise<CheckResult> {
  try {
    const client = DaemonClient.fromConfig(configFile, environment);
    const health = await client.get(
      "/health",
      HealthReplySchema,
      AbortSignal.timeout(DAEMON_TIMEOUT_MILLISECONDS),
    );
    const why = (health.reasons ?? []).map((reason) => `: ${reason.message}`).join("");
    const detail = `${client.baseUrl}/health: ${health.status} (version ${health.version})${why}`;
    return { ok: health.status === "ok", detail };
  } catch (error) {
    return { ok: false, detail: toAgentdError(error).describe() };
  }
}

async function checkSandbox(
  configFile: string | undefined,
  environment: NodeJS.ProcessEnv,
): Promise<CheckResult> {
  let workdir: string | undefined;
  try {
    const { config, file } = loadConfig({ file: configFile, environment });
    if (config.sandbox.mode === "off") return { ok: true, detail: "not checked: config sandbox is off" };
    const host = new SandboxHost({ config, configFile: file, environment });
    // Where agents without a workdir work: the daemon's user must be able to create folders there.
    await mkdir(host.workspacesRoot, { recursive: true });
    workdir = await mkdtemp(path.join(host.workspacesRoot, ".health-"));
    const result = await runShellCommand({
      command: "true",
      workdir,
      environment: {},
      sandbox: host.policyFor({ settings: config.sandbox, workdir, owner: "the health check" }),
      maxOutputBytes: 4_096,
      signal: AbortSignal.timeout(SANDBOX_TIMEOUT_MILLISECONDS),
    });
    if (result.exitCode === 0) {
      return { ok: true, detail: `a shell call ran in the sandbox (workspaces in ${host.workspacesRoot})` };
    }
    const said = (result.spawnError ?? result.stderr.text(2_000)).trim() || `exit ${String(result.exitCode)}`;
    return { ok: false, detail: `a sandboxed \`true\` failed: ${said}` };
  } catch (error) {
    return { ok: false, detail: toAgentdError(error).describe() };
  } finally {
    if (workdir !== undefined) await rm(workdir, { recursive: true, force: true });
  }
}
