import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { requireBubblewrap } from "./bubblewrap.js";
import { bubblewrapArguments } from "./bubblewrap-arguments.js";
import { type NetworkProxy, startNetworkProxy } from "./network-proxy.js";
import { BRIDGE_CODE, BRIDGE_PORT } from "./proxy-bridge.js";
import type { SandboxPolicy } from "./sandbox-policy.js";

/** A child as its caller describes it. */
export interface ChildCommand {
  command: string;
  arguments: string[];
  workdir: string;
  environment: Record<string, string>;
}

/** The same child as it is really started (inside bubblewrap), and what to release once it ended. */
export interface PreparedChild extends ChildCommand {
  /** Stops the child's network proxy, if it has one. Idempotent. */
  release(): Promise<void>;
}

const PROXY_VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"];

/**
 * Wraps a child in the sandbox its policy describes: `bwrap … -- command args`, or for a host list
 * `bwrap … -- node -e <bridge> <socket> <port> command args` with the proxy variables set. `mode:
 * off` returns the child as it is. Throws SANDBOX_UNAVAILABLE when bubblewrap cannot be used.
 */
export async function prepareSandboxedChild(
  policy: SandboxPolicy,
  child: ChildCommand,
): Promise<PreparedChild> {
  if (policy.mode === "off") return { ...child, release: async () => undefined };
  const bubblewrap = requireBubblewrap(policy.searchPath, policy.owner);
  if (policy.network.kind !== "hosts") {
    const args = bubblewrapArguments(policy, { read: [], write: [] });
    return {
      command: bubblewrap,
      arguments: [...args, "--", child.command, ...child.arguments],
      workdir: child.workdir,
      environment: child.environment,
      release: async () => undefined,
    };
  }
  // The socket lives in a folder of its own, bound alone into the sandbox (/tmp is private there).
  const folder = await mkdtemp(path.join(os.tmpdir(), "agentd-net-"));
  const socketPath = path.join(folder, "proxy.sock");
  let proxy: NetworkProxy;
  try {
    proxy = await startNetworkProxy(socketPath, policy.network.rules);
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  const proxyUrl = `http://127.0.0.1:${BRIDGE_PORT}`;
  const proxyEnvironment: Record<string, string> = { NO_PROXY: "", no_proxy: "" };
  for (const name of PROXY_VARIABLES) {
    proxyEnvironment[name] = proxyUrl;
    proxyEnvironment[name.toLowerCase()] = proxyUrl;
  }
  const args = bubblewrapArguments(policy, { read: [process.execPath], write: [folder] });
  let released: Promise<void> | undefined;
  return {
    command: bubblewrap,
    arguments: [
      ...args,
      "--",
      process.execPath,
      "-e",
      BRIDGE_CODE,
      socketPath,
      String(BRIDGE_PORT),
      child.command,
      ...child.arguments,
    ],
    workdir: child.workdir,
    environment: { ...child.environment, ...proxyEnvironment },
    release: () => (released ??= proxy.close().finally(() => rm(folder, { recursive: true, force: true }))),
  };
}
