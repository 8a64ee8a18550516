import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import type { ProxyLimits } from "../../src/sandbox/proxy-limits.js";

const HOST_SCRIPT = path.resolve(import.meta.dirname, "../fixtures/sandbox/network-proxy-host.mjs");

/** What came back on one raw connection to the proxy. */
export interface Exchange {
  /** Every byte the proxy sent, as latin1 text. */
  reply: string;
  /** True when the proxy closed the connection before the test gave up waiting. */
  closed: boolean;
}

/** A connection to the proxy that a test keeps open and drives step by step. */
export interface HeldConnection {
  write(text: string): void;
  /** Everything received so far, as latin1 text. */
  received(): string;
  /** Resolves with what was received once it matches `pattern`, or rejects when the proxy closes first. */
  receive(pattern: RegExp): Promise<string>;
  /** Resolves once the proxy (or the test) closed the connection. */
  readonly closed: Promise<void>;
  destroy(): void;
}

/** The built proxy (`dist/`) running alone in a node child process, as the daemon would run it. */
export interface ProxyUnderTest {
  socketPath: string;
  pid: number;
  /** True while the child process runs. */
  alive(): boolean;
  stderr(): string;
  /**
   * Opens a connection, writes `chunks` one after another, half-closes it (unless `keepOpen`) and
   * collects the answer until the proxy closes the connection or `waitMilliseconds` passed.
   */
  exchange(
    chunks: readonly Buffer[],
    options?: { keepOpen?: boolean; waitMilliseconds?: number },
  ): Promise<Exchange>;
  /** Opens a connection and resolves once it is connected. */
  connect(): Promise<HeldConnection>;
  /** Open connections of the child (file descriptors that are sockets). */
  openSockets(): number;
  stop(): Promise<void>;
}

/** How the proxy host runs besides its host list and limits. */
export interface ProxyHostOptions {
  /** The proxy's `privateAddresses` option (config `sandbox.private_addresses: allow`). */
  privateAddresses?: boolean;
  /**
   * Lines of an /etc/hosts the proxy resolves names with: the proxy then runs under bubblewrap with
   * this file bound over /etc/hosts (and `pid` is bubblewrap's).
   */
  etcHosts?: string;
}

/** Starts the proxy host fixture with this host list and these limits; resolves once it listens. */
export async function startProxyUnderTest(
  hostList: string[],
  limits: Partial<ProxyLimits>,
  options: ProxyHostOptions = {},
): Promise<ProxyUnderTest> {
  const folder = mkdtempSync(path.join(tmpdir(), "agentd-proxy-fuzz-"));
  const socketPath = path.join(folder, "proxy.sock");
  const hostArguments = [
    HOST_SCRIPT,
    socketPath,
    JSON.stringify(hostList),
    JSON.stringify(limits),
    JSON.stringify({ privateAddresses: options.privateAddresses ?? false }),
  ];
  let command = process.execPath;
  let commandArguments = hostArguments;
  if (options.etcHosts !== undefined) {
    const hostsFile = path.join(folder, "hosts");
    writeFileSync(hostsFile, options.etcHosts);
    command = "bwrap";
    // --die-with-parent: stop() kills bwrap, and the proxy host inside must end with it.
    commandArguments = [
      "--die-with-parent",
      "--dev-bind",
      "/",
      "/",
      "--ro-bind",
      hostsFile,
      "/etc/hosts",
      "--",
      process.execPath,
    ];
    commandArguments.push(...hostArguments);
  }
  const child: ChildProcess = spawn(command, commandArguments, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = once(child, "exit");
  const lines = createInterface({ input: child.stdout ?? process.stdin });
  const listening = new Promise<void>((resolve) =>
    lines.on("line", (line) => line === "listening" && resolve()),
  );
  await Promise.race([
    listening,
    exited.then(() => Promise.reject(new Error(`the proxy host exited before listening:\n${stderr}`))),
  ]);
  const pid = child.pid ?? 0;
  return {
    socketPath,
    pid,
    alive: () => child.exitCode === null && child.signalCode === null,
    stderr: () => stderr,
    exchange: (chunks, options = {}) => exchange(socketPath, chunks, options),
    connect: () => holdConnection(socketPath),
    openSockets: () =>
      readdirSync(`/proc/${pid}/fd`).filter((fd) => {
        try {
          return /^socket:/.test(readlinkSync(`/proc/${pid}/fd/${fd}`));
        } catch {
          return false;
        }
      }).length,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function exchange(
  socketPath: string,
  chunks: readonly Buffer[],
  options: { keepOpen?: boolean; waitMilliseconds?: number },
): Promise<Exchange> {
  const socket = net.connect(socketPath);
  const received: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => received.push(chunk));
  socket.on("error", () => undefined);
  const closed = new Promise<boolean>((resolve) => socket.once("close", () => resolve(true)));
  await Promise.race([new Promise((resolve) => socket.once("connect", resolve)), closed]);
  for (const chunk of chunks) {
    if (socket.destroyed) break;
    // The write's callback runs once the bytes are handed over, or with an error when the proxy
    // closed the connection first (which the case then reports through `closed`).
    await new Promise<void>((resolve) => socket.write(chunk, () => resolve()));
  }
  if (!options.keepOpen && !socket.destroyed) socket.end();
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), options.waitMilliseconds ?? 3_000);
  });
  const wasClosed = await Promise.race([closed, gaveUp]);
  clearTimeout(timer);
  socket.destroy();
  return { reply: Buffer.concat(received).toString("latin1"), closed: wasClosed };
}

async function holdConnection(socketPath: string): Promise<HeldConnection> {
  const socket = net.connect(socketPath);
  let text = "";
  const waiters = new Set<() => void>();
  socket.on("data", (chunk: Buffer) => {
    text += chunk.toString("latin1");
    for (const waiter of waiters) waiter();
  });
  socket.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  void closed.then(() => {
    for (const waiter of waiters) waiter();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    void closed.then(() => reject(new Error("the proxy closed the connection at once")));
  });
  return {
    write: (data) => void socket.write(Buffer.from(data, "latin1")),
    received: () => text,
    receive: (pattern) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (pattern.test(text)) {
            waiters.delete(check);
            resolve(text);
          } else if (socket.destroyed) {
            waiters.delete(check);
            reject(
              new Error(`the connection closed before ${String(pattern)}; received ${JSON.stringify(text)}`),
            );
          }
        };
        waiters.add(check);
        check();
      }),
    closed,
    destroy: () => socket.destroy(),
  };
}
