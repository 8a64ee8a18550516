/** The port the bridge listens on inside the sandbox's own network namespace (nothing else is there). */
export const BRIDGE_PORT = 3128;

/**
 * Code run by node inside the sandbox (`node -e BRIDGE_CODE <socket> <port> <command> <args…>`):
 * listens on 127.0.0.1:<port>, forwards each connection to the proxy's unix socket, then runs the
 * command with the same stdio, passes on SIGTERM/SIGINT/SIGHUP, and ends as it ended.
 */
export const BRIDGE_CODE = `
const net = require("node:net");
const { spawn } = require("node:child_process");
const [socketPath, port, command, ...args] = process.argv.slice(1);
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  client.pipe(upstream);
  upstream.pipe(client);
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
});
server.listen(Number(port), "127.0.0.1", () => {
  const child = spawn(command, args, { stdio: "inherit" });
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
