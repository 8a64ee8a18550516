import { AgentdError, toAgentdError } from "../errors/agentd-error.js";

/** A bind failure said in the user's terms: which address, and what to change. */
export function listenError(error: unknown, host: string, port: number): AgentdError {
  const code = (error as NodeJS.ErrnoException).code;
  const address = `${host}:${port}`;
  if (code === "EADDRINUSE") {
    return new AgentdError("ADDRESS_IN_USE", `another process already listens on ${address}`, {
      field: "server.port",
      hint: "stop the other agentd (agentd agents shows whether it answers) or set server.port in config.yaml",
      cause: error,
    });
  }
  if (code === "EACCES" || code === "EADDRNOTAVAIL") {
    return new AgentdError("ADDRESS_IN_USE", `cannot listen on ${address} (${code})`, {
      field: code === "EACCES" ? "server.port" : "server.host",
      hint: "use a port above 1023 and a host address of this machine (127.0.0.1 by default)",
      cause: error,
    });
  }
  return toAgentdError(error);
}
