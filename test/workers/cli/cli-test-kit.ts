import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { onTestFinished } from "vitest";
import { ConfigSchema, type Config } from "../../../src/config/config-schema.js";
import type { AgentEvent } from "../../../src/events/agent-event.js";
import { EventBus } from "../../../src/events/event-bus.js";
import { createLogger } from "../../../src/logging/logger.js";
import { RunControl } from "../../../src/run-vocabulary/run-control.js";
import type { LlmFallback } from "../../../src/workers/cli/cli-worker.js";
import { createCliWorker } from "../../../src/workers/cli/create-cli-worker.js";
import type { RunContext } from "../../../src/workers/worker.js";
import type { RunOutcome } from "../../../src/run-vocabulary/run-outcome.js";
import { EventLog } from "../../runs/event-waiter.js";
import { makeDefinition } from "../../support/make-definition.js";
import { waitFor } from "../../support/wait-for.js";

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../fixtures/cli");

/** The path of a fake CLI script under test/fixtures/cli. */
export function fixture(name: string): string {
  return path.join(FIXTURES, name);
}

export const silentLogger = createLogger({ level: "silent", pretty: false });

/** An LLM fallback that records what it was given and completes with a fixed answer. */
export class RecordingLlm implements LlmFallback {
  readonly calls: Array<{ task: string; systemPrompt: string; note: string | undefined }> = [];

  async run(context: RunContext, options?: { note?: string }): Promise<RunOutcome> {
    this.calls.push({
      task: context.task,
      systemPrompt: context.definition.systemPrompt,
      note: options?.note,
    });
    return {
      status: "completed",
      result: "answer from the LLM",
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      cost_usd: 0.001,
      worker: "llm",
    };
  }
}

export interface HarnessOptions {
  /**
   * Config `cli_tools` on top of the fakes wired as claude, gemini and codex; each entry's `env`
   * gets the fakes' recording variables too.
   */
  cliTools?: Record<string, unknown>;
  /** FAKE_CLI_SCENARIO for the fakes. */
  scenario?: string;
  cooldown?: number;
  now?: () => Date;
  /** The LLM worker runs fall back to; default a RecordingLlm (`harness.llm`). */
  llmFallback?: LlmFallback;
  /** Makes the fake claude wait, after its tool call, until `goFile` exists. */
  waitForGo?: boolean;
  /** Config `llm` (prices for the CLI's model). */
  llm?: Record<string, unknown>;
}

/**
 * A temp directory with a data dir and a workdir, the fake tools wired in through config
 * `cli_tools` overrides (each fake records its argv and its process tree's pids there), an event
 * bus with a log, a recording LLM fallback and the CLI worker built by its factory.
 */
export class CliHarness {
  readonly root = mkdtempSync(path.join(tmpdir(), "agentd-cli-"));
  readonly dataDirectory = path.join(this.root, "data");
  readonly workdir = path.join(this.root, "work", "notes");
  /** Where the fakes record what they saw: writable inside their sandbox (nothing else outside the workdir is). */
  readonly recordFolder = path.join(this.root, "record");
  readonly argumentsFile = path.join(this.recordFolder, "arguments.json");
  readonly pidFile = path.join(this.recordFolder, "pids.txt");
  readonly goFile = path.join(this.recordFolder, "go");
  readonly bus = new EventBus();
  readonly log = new EventLog(this.bus);
  readonly llm = new RecordingLlm();
  readonly config: Config;
  readonly #options: HarnessOptions;
  #worker: ReturnType<typeof createCliWorker> | undefined;

  constructor(options: HarnessOptions = {}) {
    this.#options = options;
    mkdirSync(this.recordFolder);
    const env = {
      FAKE_CLI_SCENARIO: options.scenario ?? "success",
      FAKE_CLI_ARGS_FILE: this.argumentsFile,
      FAKE_CLI_PID_FILE: this.pidFile,
      ...(options.waitForGo ? { FAKE_CLI_GO_FILE: this.goFile } : {}),
    };
    const fakes: Record<string, unknown> = {
      claude: { command: fixture("claude"), env },
      gemini: { command: fixture("gemini"), env },
      codex: { command: fixture("codex"), env },
    };
    this.config = ConfigSchema.parse({
      data_dir: this.dataDirectory,
      ...(options.llm ? { llm: options.llm } : {}),
      cli_tools: { ...fakes, ...withFakeEnvironment(options.cliTools ?? {}, env, fakes) },
      cli: { kill_grace: 500, ...(options.cooldown === undefined ? {} : { cooldown: options.cooldown }) },
    });
  }

  /** The factory-built worker; a new harness worker (same data dir) stands for a daemon restart. */
  worker(): ReturnType<typeof createCliWorker> {
    this.#worker ??= this.restart();
    return this.#worker;
  }

  /**
   * The fakes always run inside agentd's sandbox; `outerSandbox` (default false here, derived from
   * the agent's sandbox in the daemon) only decides which of the CLIs' own sandbox flags they get.
   */
  restart(options: { outerSandbox?: boolean } = {}): ReturnType<typeof createCliWorker> {
    this.#worker = createCliWorker({
      outerSandbox: false,
      ...options,
      config: this.config,
      llmFallback: this.#options.llmFallback ?? this.llm,
      logger: silentLogger,
      dataDirectory: this.dataDirectory,
      ...(this.#options.now ? { now: this.#options.now } : {}),
    });
    return this.#worker;
  }

  /** A run context for an agent with `worker: cli` and the given `cli:` settings. */
  context(
    cli: Record<string, unknown>,
    options: {
      task?: string;
      model?: string;
      timeout?: number;
      control?: RunControl;
      runId?: string;
      /** More frontmatter: tools, permissions, limits… */
      frontmatter?: Record<string, unknown>;
      systemPrompt?: string;
    } = {},
  ): RunContext {
    const definition = makeDefinition({
      id: "notes",
      frontmatter: {
        worker: "cli",
        cli,
        sandbox: { write: [this.recordFolder] },
        ...(options.model ? { model: options.model } : {}),
        ...options.frontmatter,
      },
      systemPrompt: options.systemPrompt ?? "You write release notes.",
      workdir: this.workdir,
      ...(options.timeout === undefined ? {} : { limits: { timeout: options.timeout } }),
    });
    return {
      runId: options.runId ?? "r_test",
      definition,
      task: options.task ?? "Write the notes for today",
      // As the run manager does: the run's timeout is its control's working-time clock.
      control: options.control ?? new RunControl({ timeoutMilliseconds: definition.limits.timeout }),
      events: this.bus,
      setStatus: () => {},
    };
  }

  run(cli: Record<string, unknown>, options: Parameters<CliHarness["context"]>[1] = {}): Promise<RunOutcome> {
    return this.worker().run(this.context(cli, options));
  }

  /** Events of one type, in order. */
  eventsOf<Type extends AgentEvent["type"]>(type: Type): Array<Extract<AgentEvent, { type: Type }>> {
    return this.log.events.filter(
      (event): event is Extract<AgentEvent, { type: Type }> => event.type === type,
    );
  }

  /** What the fake was started with. */
  recordedArguments(): RecordedStart {
    return JSON.parse(readFileSync(this.argumentsFile, "utf8")) as RecordedStart;
  }

  /**
   * Waits until the fake has recorded `count` pids of its process tree, and returns them as the
   * host sees them: the fake runs in the sandbox's own PID namespace, so each recorded pid is
   * translated through the NSpid line of the host's processes that carry this harness's pid file.
   */
  async waitForPids(count: number, timeoutMilliseconds = 15_000): Promise<number[]> {
    return waitFor(
      async () => {
        const text = await readFile(this.pidFile, "utf8").catch(() => "");
        const recorded = text.split("\n").filter(Boolean).map(Number);
        const hostPids = this.#hostPids();
        // A recorded process the scan does not find has ended: it stands as a pid known to be gone.
        const pids = recorded.map((pid) => hostPids.get(pid) ?? endedPid());
        return pids.length >= count ? pids : undefined;
      },
      `the fake to record ${count} pids`,
      timeoutMilliseconds,
    );
  }

  dispose(): void {
    rmSync(this.root, { recursive: true, force: true });
  }

  /** Namespace pid → host pid of the running processes started with this harness's pid file. */
  #hostPids(): Map<number, number> {
    const found = new Map<number, number>();
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (!readFileSync(`/proc/${entry}/environ`, "latin1").includes(`FAKE_CLI_PID_FILE=${this.pidFile}\0`))
          continue;
        const ids = /^NSpid:\s+(.+)$/m
          .exec(readFileSync(`/proc/${entry}/status`, "latin1"))?.[1]
          ?.split(/\s+/);
        const inner = Number(ids?.at(-1));
        if (Number.isFinite(inner)) found.set(inner, Number(entry));
      } catch {
        // Gone meanwhile.
      }
    }
    return found;
  }
}

/** A harness whose folder is removed when the calling test ends. */
export function cliHarness(options: HarnessOptions = {}): CliHarness {
  const harness = new CliHarness(options);
  onTestFinished(() => harness.dispose());
  return harness;
}

/** The pid of a process that has ended and been reaped. */
function endedPid(): number {
  return spawnSync("true").pid ?? 0;
}

/** What a fake CLI recorded at its start. */
export interface RecordedStart {
  argv: string[];
  cwd: string;
  /** Its CLI-related variables (TMPDIR, CLAUDE_*, CODEX_*, GEMINI_*…). */
  env: Record<string, string>;
  /** Its whole environment. */
  environment: Record<string, string>;
  /** Files agentd wrote for the run, by path: they are removed after it. */
  files: Record<string, string>;
  /** The permission bits of its TMPDIR. */
  tmpdirMode: number | undefined;
}

/** True while `pid` is a live process (a zombie counts as gone). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** The scheduler state letter of a process (`T` = stopped), Linux only. */
export function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
}

/** Each entry with the fakes' recording variables; an entry of a faked tool keeps the fake's command. */
function withFakeEnvironment(
  cliTools: Record<string, unknown>,
  environment: Record<string, string>,
  fakes: Record<string, unknown>,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(cliTools).map(([name, entry]) => {
      const tool = entry as { command?: string; env?: Record<string, string> };
      const fake = fakes[name] as { command?: string } | undefined;
      const command = tool.command ?? fake?.command;
      return [name, { ...tool, ...(command ? { command } : {}), env: { ...environment, ...tool.env } }];
    }),
  );
}
