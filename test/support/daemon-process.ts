import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { createInterface } from "node:readline";

/** The repository root, where `dist/` is built. */
const ROOT = path.resolve(import.meta.dirname, "../..");
const MAIN = path.join(ROOT, "dist", "cli", "main.js");

export interface DaemonProcessOptions {
  configFile: string;
  /** Extra environment for the child. */
  environment?: Record<string, string>;
  /** How long to wait for `{"event":"listening"}` (default 30 s: the machine may be loaded). */
  readyTimeoutMilliseconds?: number;
}

export interface HttpReply {
  status: number;
  body: unknown;
}

/** The real daemon (`node dist/cli/main.js start`) running as a child process in its own group. */
export interface DaemonProcess {
  url: string;
  pid: number;
  /** Everything the child wrote to stderr so far (logs and the summary). */
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal) once the child is gone. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  request(method: string, urlPath: string, body?: unknown): Promise<HttpReply>;
  /** Sends a signal to the daemon process only. */
  signal(signal: NodeJS.Signals): void;
  /** kill -9 of the daemon and every process it started; resolves once it is gone. */
  kill(): Promise<void>;
}

/** Starts the built daemon and resolves once it printed its listening line. */
export async function startDaemonProcess(options: DaemonProcessOptions): Promise<DaemonProcess> {
  const child = spawn(process.execPath, [MAIN, "start", "--config", options.configFile], {
    cwd: path.dirname(options.configFile),
    env: { ...process.env, ...options.environment },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = once(child, "exit").then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const url = await waitForListening(child, exited, options.readyTimeoutMilliseconds ?? 30_000, () => stderr);
  const pid = child.pid ?? 0;
  return {
    url,
    pid,
    stderr: () => stderr,
    exited,
    request: (method, urlPath, body) => request(url, method, urlPath, body),
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
): Promise<string> {
  const lines = createInterface({ input: child.stdout ?? process.stdin });
  const listening = new Promise<string>((resolve) => {
    lines.on("line", (line) => {
      const parsed = parseJson(line);
      if (isListening(parsed)) resolve(parsed.url);
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

function isListening(value: unknown): value is { event: "listening"; url: string } {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { event?: unknown }).event === "listening" &&
    typeof (value as { url?: unknown }).url === "string"
  );
}

async function request(baseUrl: string, method: string, urlPath: string, body?: unknown): Promise<HttpReply> {
  const response = await fetch(`${baseUrl}${urlPath}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
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
