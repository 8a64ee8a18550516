import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { AGENTD_MAIN, environmentWithoutAgentd } from "./agentd-cli.js";

export interface DaemonProcessOptions {
  configFile: string;
  /** Variables over the test process's own, from which every `AGENTD_*` variable is left out. */
  environment?: Record<string, string>;
  /** How long to wait for `{"event":"listening"}` (default 30 s: the machine may be loaded). */
  readyTimeoutMilliseconds?: number;
  /** The CLI entry to start (default: this repository's dist/cli/main.js). */
  main?: string;
  /** Runs the daemon as this user (the test runs as root): its files must be that user's. */
  user?: { uid: number; gid: number };
  /**
   * Hands the daemon one more open descriptor, a pipe to the test at this number (as a supervisor
   * might leave one open): what arrives on it is in `inherited()`.
   */
  inheritedDescriptor?: number;
}

export interface HttpReply {
  status: number;
  body: unknown;
}

/** The real daemon (`node dist/cli/main.js start`) running as a child process in its own group. */
export interface DaemonProcess {
  url: string;
  pid: number;
  /** The API token the daemon generated (read from the `token_file` of its listening line). */
  token: string | undefined;
  /** The headers a client of this daemon sends: the bearer token. */
  headers(): Record<string, string>;
  /** Everything the child wrote to stderr so far (logs and the summary). */
  stderr(): string;
  /** Everything the child wrote to stdout so far (the listening line). */
  stdout(): string;
  /** What arrived so far on the descriptor `inheritedDescriptor` handed over. */
  inherited(): string;
  /** Resolves with the exit code (null when killed by a signal) once the child is gone. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** A request as the CLI sends it: with the token, and `content-type: application/json` on a POST. */
  request(method: string, urlPath: string, body?: unknown): Promise<HttpReply>;
  /** Sends a signal to the daemon process only. */
  signal(signal: NodeJS.Signals): void;
  /** kill -9 of the daemon and every process it started; resolves once it is gone. */
  kill(): Promise<void>;
}

/** Starts the built daemon and resolves once it printed its listening line. */
export async function startDaemonProcess(options: DaemonProcessOptions): Promise<DaemonProcess> {
  const child = spawn(
    process.execPath,
    [options.main ?? AGENTD_MAIN, "start", "--config", options.configFile],
    {
      cwd: path.dirname(options.configFile),
      env: { ...environmentWithoutAgentd(), ...options.environment },
      stdio: [
        "ignore",
        "pipe",
        "pipe",
        ...Array.from({ length: Math.max(0, (options.inheritedDescriptor ?? 0) - 2) }, (_, index) =>
          index + 3 === options.inheritedDescriptor ? ("pipe" as const) : ("ignore" as const),
        ),
      ],
      detached: true,
      ...(options.user === undefined ? {} : { uid: options.user.uid, gid: options.user.gid }),
    },
  );
  let stderr = "";
  let stdout = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  let inherited = "";
  const extra = options.inheritedDescriptor === undefined ? null : child.stdio[options.inheritedDescriptor];
  extra?.on("data", (chunk: Buffer) => (inherited += chunk.toString("utf8")));
  extra?.on("error", () => undefined);
  const exited = once(child, "exit").then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const listening = await waitForListening(
    child,
    exited,
    options.readyTimeoutMilliseconds ?? 30_000,
    () => stderr,
  );
  const { url } = listening;
  const pid = child.pid ?? 0;
  const token =
    listening.token_file === undefined ? undefined : readFileSync(listening.token_file, "utf8").trim();
  const headers = (): Record<string, string> =>
    token === undefined ? {} : { authorization: `Bearer ${token}` };
  return {
    url,
    pid,
    token,
    headers,
    stderr: () => stderr,
    stdout: () => stdout,
    inherited: () => inherited,
    exited,
    request: (method, urlPath, body) => request(url, headers(), method, urlPath, body),
    signal: (signal) => child.kill(signal),
    kill: async () => {
      killGroup(pid);
      await exited;
    },
  };
}

/** Kills a daemon's whole process group, ignoring one that is already gone. For teardown. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

async function waitForListening(
  child: ChildProcess,
  exited: Promise<unknown>,
  timeoutMilliseconds: number,
  stderr: () => string,
): Promise<ListeningLine> {
  const lines = createInterface({ input: child.stdout ?? process.stdin });
  const listening = new Promise<ListeningLine>((resolve) => {
    lines.on("line", (line) => {
      const parsed = parseJson(line);
      if (isListening(parsed)) resolve(parsed);
    });
  });
  let timer: NodeJS.Timeout | undefined;
  const failure = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      killGroup(child.pid ?? 0);
      reject(new Error(`the daemon was not listening after ${timeoutMilliseconds} ms\n${stderr()}`));
    }, timeoutMilliseconds);
    void exited.then(() => reject(new Error(`the daemon exited before listening\n${stderr()}`)));
  });
  try {
    return await Promise.race([listening, failure]);
  } finally {
    clearTimeout(timer);
  }
}

/** What `agentd start` prints on stdout once it listens. */
interface ListeningLine {
  event: "listening";
  url: string;
  token_file?: string;
}

function isListening(value: unknown): value is ListeningLine {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { event?: unknown }).event === "listening" &&
    typeof (value as { url?: unknown }).url === "string"
  );
}

async function request(
  baseUrl: string,
  headers: Record<string, string>,
  method: string,
  urlPath: string,
  body?: unknown,
): Promise<HttpReply> {
  const response = await fetch(`${baseUrl}${urlPath}`, {
    method,
    headers: method === "GET" ? headers : { ...headers, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : parseJson(text) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
