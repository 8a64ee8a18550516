import path from "node:path";
import { execa } from "execa";

/** The built CLI (`npm run build` first, as `npm test` does). */
export const AGENTD_MAIN = path.resolve(import.meta.dirname, "../../dist/cli/main.js");

/** The package's bin, as `npx agentd` starts it: `agentd run` goes from it to the run's bundle. */
export const AGENTD_BIN = path.resolve(import.meta.dirname, "../../bin/agentd.js");

export interface AgentdCliOptions {
  /** The folder it runs in (the test process's by default). */
  cwd?: string;
  /** Piped to stdin, then closed; without it stdin is /dev/null, as under a scheduler or in CI. */
  input?: string;
  /** Variables over the test process's own, from which every `AGENTD_*` variable is left out. */
  environment?: Record<string, string>;
  /** Killed after this long (default 60 s: a loaded machine starts a CLI in seconds). */
  timeoutMilliseconds?: number;
}

/**
 * `agentd <args>` as a user types it, in its own process, awaited to its end: it never rejects, the
 * test reads `exitCode`, `stdout` and `stderr`. Nothing from the developer's shell (a vault key, a
 * daemon URL) reaches it unless the test passes it.
 */
export function agentd(args: string[], options: AgentdCliOptions = {}) {
  return execa(process.execPath, [AGENTD_MAIN, ...args], {
    cwd: options.cwd,
    ...(options.input === undefined ? { stdin: "ignore" as const } : { input: options.input }),
    env: { ...environmentWithoutAgentd(), ...options.environment },
    extendEnv: false,
    reject: false,
    // What a terminal shows: the last newline is part of what a test checks.
    stripFinalNewline: false,
    timeout: options.timeoutMilliseconds ?? 60_000,
  });
}

/**
 * `agentd <args>` started through the package's bin, with Node's own `nodeArguments` (a module
 * hook, say) before it; otherwise as `agentd` above. `all` holds stdout and stderr interleaved.
 */
export function agentdBin(args: string[], options: AgentdCliOptions & { nodeArguments?: string[] } = {}) {
  return execa(process.execPath, [...(options.nodeArguments ?? []), AGENTD_BIN, ...args], {
    cwd: options.cwd,
    stdin: "ignore",
    env: { ...environmentWithoutAgentd(), ...options.environment },
    extendEnv: false,
    reject: false,
    all: true,
    timeout: options.timeoutMilliseconds ?? 60_000,
  });
}

/** The test process's environment without its `AGENTD_*` variables. */
export function environmentWithoutAgentd(): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith("AGENTD_")) kept[name] = value;
  }
  return kept;
}
