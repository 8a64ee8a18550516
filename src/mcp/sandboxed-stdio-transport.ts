import { type ChildProcess, spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { PreparedChild } from "../sandbox/sandboxed-child.js";

/**
 * The largest JSON-RPC message read from a stdio server (the SDK's own default, said here): a tool
 * answering more is cut off with a message saying so, and the server is started again on next use.
 */
const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** How long close() waits for the server to exit after stdin closes, and again after SIGTERM. */
const CLOSE_WAIT_MILLISECONDS = 2_000;

/**
 * The MCP SDK's stdio client transport, for a child prepared by the sandbox: the same JSON-RPC
 * lines over stdin and stdout, and the child spawned with the sandbox's extra stdio entries
 * (bubblewrap's seccomp filter, the network bridge's channel), which the SDK's transport cannot
 * pass. stderr is readable from the start, so nothing the server prints early is lost.
 */
export class SandboxedStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  /** What the server writes to stderr. */
  readonly stderr = new PassThrough();
  readonly #prepared: PreparedChild;
  readonly #readBuffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  #process: ChildProcess | undefined;
  /** Why agentd ended the connection itself, when it did (a message too large to read). */
  #closeReason: string | undefined;

  constructor(prepared: PreparedChild) {
    this.#prepared = prepared;
  }

  /** Why agentd closed the connection itself (not the server), for the failure of the call it cut. */
  get closeReason(): string | undefined {
    return this.#closeReason;
  }

  /** The server's pid (bubblewrap's, in the sandbox) once started. */
  get pid(): number | null {
    return this.#process?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.#process) throw new Error("SandboxedStdioTransport already started");
    return new Promise((resolve, reject) => {
      const prepared = this.#prepared;
      const child = spawn(prepared.command, prepared.arguments, {
        cwd: prepared.workdir,
        env: prepared.environment,
        stdio: ["pipe", "pipe", "pipe", ...prepared.extraStdio],
      });
      prepared.started(child);
      this.#process = child;
      child.on("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on("spawn", () => resolve());
      child.on("close", () => {
        this.#process = undefined;
        this.onclose?.();
      });
      child.stdin?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("data", (chunk: Buffer) => {
        try {
          this.#readBuffer.append(chunk);
          this.#readMessages();
        } catch (error) {
          // The SDK's buffer refuses a message past its size: the rest of the stream cannot be read.
          this.#closeReason ??=
            `sent a message larger than ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB, more than agentd reads ` +
            "from an MCP server at once, so agentd closed the connection";
          this.onerror?.(error as Error);
          void this.close().catch(() => undefined);
        }
      });
      child.stderr?.pipe(this.stderr);
    });
  }

  #readMessages(): void {
    for (;;) {
      try {
        const message = this.#readBuffer.readMessage();
        if (message === null) return;
        this.onmessage?.(message);
      } catch (error) {
        this.onerror?.(error as Error);
      }
    }
  }

  async close(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (child) {
      const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
      const waitForClose = () =>
        Promise.race([
          closed,
          new Promise<void>((resolve) => setTimeout(resolve, CLOSE_WAIT_MILLISECONDS).unref()),
        ]);
      child.stdin?.end();
      await waitForClose();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await waitForClose();
      }
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    this.#readBuffer.clear();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.#process?.stdin;
      if (!stdin) return reject(new Error("Not connected"));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }
}
