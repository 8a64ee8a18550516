import { startBridgeChannel } from "./bridge-channel.js";

/** The port the bridge listens on inside the sandbox's own network namespace (nothing else is there). */
export const BRIDGE_PORT = 3128;

/**
 * The descriptor the bridge's channel has in the sandbox (and in bubblewrap): the child's fourth
 * extra stdio entry, a socketpair Node makes for a `pipe` entry. Inherited, so the bridge never
 * calls socket(AF_UNIX), which the seccomp filter refuses.
 */
export const BRIDGE_CHANNEL_DESCRIPTOR = 4;

/**
 * Code run by node inside the sandbox (`node -e BRIDGE_CODE <port> <priority> <command> <args…>`,
 * the channel on descriptor 4): sets its main thread's CPU priority to <priority> (the sandbox's
 * nice value, child-limits.ts), which the command, spawned from that thread, inherits before it can
 * start anything; listens on 127.0.0.1:<port>, carries each connection as a stream of
 * the channel (bridge-channel.ts, its source inlined) to the daemon, which connects it to the
 * child's proxy; then runs the command with the same stdio, passes on SIGTERM/SIGINT/SIGHUP, and
 * ends as it ended. The command gets /dev/null on descriptor 4, not the channel.
 */
export const BRIDGE_CODE = `
"use strict";
const net = require("node:net");
const fs = require("node:fs");
const { spawn } = require("node:child_process");
const startBridgeChannel = ${startBridgeChannel.toString()};
const [port, priority, command, ...args] = process.argv.slice(1);
try {
  require("node:os").setPriority(Number(priority));
} catch {
  // Not allowed (a priority above the daemon's): the command runs at the bridge's.
}
const channel = new net.Socket({ fd: ${BRIDGE_CHANNEL_DESCRIPTOR}, readable: true, writable: true });
const bridge = startBridgeChannel(channel, {});
const server = net.createServer({ allowHalfOpen: true }, (client) => bridge.open(client));
server.listen(Number(port), "127.0.0.1", () => {
  const nothing = fs.openSync("/dev/null", "r+");
  const child = spawn(command, args, { stdio: ["inherit", "inherit", "inherit", "ignore", nothing] });
  fs.closeSync(nothing);
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("error", (error) => {
    const reason = error.code === "ENOENT" ? "No such file or directory" : "Permission denied";
    process.stderr.write("agentd sandbox: execvp " + command + ": " + reason + "\\n");
    process.exit(error.code === "ENOENT" ? 127 : 126);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code === null ? 1 : code);
  });
});
`;
