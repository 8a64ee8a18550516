import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { Duplex } from "node:stream";
import { bindsByDescriptor, requireBubblewrap } from "./bubblewrap.js";
import { bubblewrapArguments } from "./bubblewrap-arguments.js";
import { type BridgeChannel, startBridgeChannel } from "./bridge-channel.js";
import { type NetworkProxy, startNetworkProxy, unstartedNetworkProxy } from "./network-proxy.js";
import { BRIDGE_CHANNEL_DESCRIPTOR, BRIDGE_CODE, BRIDGE_PORT } from "./proxy-bridge.js";
import { proxySocketsFolder } from "./proxy-sockets-folder.js";
import {
  type HandedListener,
  handoffInvocation,
  handoffProgram,
  serveHandedListener,
} from "./listener-handoff.js";
import { limitedChild, lowerPriority, sandboxPriority } from "./child-limits.js";
import { closeOnce, openSeccompDescriptor } from "./seccomp-descriptor.js";
import { assertNoPlantedLinks } from "./planted-links.js";
import { HeldBindSources } from "./held-bind-sources.js";
import { pinResolutions } from "./cached-sandbox-mounts.js";
import { unixSocketsProgram } from "./seccomp-filter.js";
import { requireSeccompProgram } from "./seccomp-requirement.js";
import type { SandboxPolicy } from "./sandbox-policy.js";

/** A child as its caller describes it. */
export interface ChildCommand {
  command: string;
  arguments: string[];
  workdir: string;
  environment: Record<string, string>;
}

/**
 * One extra stdio entry of the spawned child (descriptor 3 on): a descriptor, a socketpair, Node's
 * IPC channel (spawn it with `serialization: "json"`), or none.
 */
export type ExtraStdio = number | "pipe" | "ipc" | "ignore";

/** The same child as it is really started (inside bubblewrap), and what to release once it ended. */
export interface PreparedChild extends ChildCommand {
  /**
   * The child's stdio from descriptor 3 on, after stdin, stdout and stderr: the seccomp filter's
   * descriptor for bubblewrap (3), the network bridge's channel or the listener handoff's IPC
   * channel (4), then the held sources of its binds (HeldBindSources). Spawn with exactly these,
   * and with `serialization: "json"`.
   */
  extraStdio: ExtraStdio[];
  /**
   * Call right after spawning, with the child: lowers its CPU priority (before it forks the
   * sandbox), closes the daemon's copy of the filter's descriptor and connects the bridge's channel, or the listener handed over, to the proxy.
   */
  started(child: Pick<ChildProcess, "pid" | "stdio" | "on" | "once" | "connected" | "disconnect">): void;
  /** Stops the child's network proxy, if it has one, and closes what `started` did not. Idempotent. */
  release(): Promise<void>;
  /**
   * The child (bubblewrap) is the only process of its tree outside a PID namespace of its own, which
   * it ends with itself (`--unshare-pid`, `--die-with-parent`): once it exited of itself, the kernel
   * has killed every process in that namespace, and nothing of the tree can be left to look for.
   * Not once a signal killed it: it binds the namespace's init to itself only after setting up.
   */
  ownPidNamespace: boolean;
}

/** The filter's descriptor in bubblewrap. */
const SECCOMP_DESCRIPTOR = 3;
const PROXY_VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"];

/**
 * Wraps a child in the sandbox its policy describes: `bwrap --seccomp 3 … -- command args`, or for
 * a host list `bwrap … -- perl -e <handoff> … <port> command args` with the proxy variables set
 * and an IPC channel on descriptor 4, over which the daemon receives the listener the command's
 * proxy variables point to (listener-handoff.ts); where perl is missing, `bwrap … -- node -e
 * <bridge> <port> command args`, a bridge beside the command, its channel on descriptor 4. The seccomp filter (seccomp-filter.ts) keeps the child
 * from making unix sockets unless config lists some (`policy.unixSockets`), and from socket
 * families the network namespace does not confine and the kernel's keyrings in every case. `mode: off` returns
 * the child as it is. Inside, the command runs under the policy's limits (child-limits.ts): a fork
 * bomb or a memory bomb there ends its own call, not the daemon. Throws SANDBOX_UNAVAILABLE when bubblewrap cannot be used, or when the
 * filter is needed and this machine's architecture has none.
 */
export async function prepareSandboxedChild(
  policy: SandboxPolicy,
  unlimited: ChildCommand,
): Promise<PreparedChild> {
  // With a host list, the handoff's perl or the node bridge runs first and sets the priority.
  const helperSetsPriority = policy.network.kind === "hosts";
  const limited =
    policy.mode === "off" ? undefined : limitedChild(unlimited, policy.limits, helperSetsPriority);
  const child = limited?.child ?? unlimited;
  const lower = (subprocess: Pick<ChildProcess, "pid">) => {
    if (limited === undefined || limited.priorityInside) return;
    lowerPriority(subprocess.pid, policy.limits);
  };
  if (policy.mode === "off") {
    return {
      ...child,
      extraStdio: [],
      started: () => undefined,
      release: async () => undefined,
      ownPidNamespace: false,
    };
  }
  const bubblewrap = requireBubblewrap(policy.searchPath, policy.owner);
  // Listed unix sockets let AF_UNIX through; the rest of the filter (other families, keyrings) holds.
  const program =
    policy.unixSockets.length === 0 ? requireSeccompProgram(policy.owner) : unixSocketsProgram();
  const filterArguments = program === undefined ? [] : ["--seccomp", String(SECCOMP_DESCRIPTOR)];
  // The bind sources follow the filter's descriptor (3), and with a host list the channel (4).
  const held = holdSources(policy, bubblewrap, policy.network.kind === "hosts" ? 5 : 4);
  try {
    return await wrapped(policy, child, bubblewrap, program, filterArguments, held, lower);
  } catch (error) {
    held?.close();
    throw error;
  }
}

/**
 * The sources of the child's binds held open (HeldBindSources), the policy's own `read:`/`write:`
 * paths opened without a planted link on their way; or, where bubblewrap cannot bind a descriptor,
 * none: those paths are then checked for planted links once more here, just before it starts (a
 * path checked when the call was made may have been swapped for a link since, during an
 * approval's wait), and bubblewrap resolves each bind's path itself a moment later.
 */
function holdSources(
  policy: SandboxPolicy,
  bubblewrap: string,
  firstChildDescriptor: number,
): HeldBindSources | undefined {
  if (!bindsByDescriptor(bubblewrap)) {
    if (policy.linkChecked !== undefined)
      assertNoPlantedLinks(policy.linkChecked.paths, policy.linkChecked.folders, policy.owner);
    return undefined;
  }
  const held = new HeldBindSources(policy.owner, firstChildDescriptor);
  try {
    if (policy.linkChecked !== undefined)
      pinResolutions(policy, held.walk(policy.linkChecked.paths, policy.linkChecked.folders));
  } catch (error) {
    held.close();
    throw error;
  }
  return held;
}

async function wrapped(
  policy: SandboxPolicy,
  child: ChildCommand,
  bubblewrap: string,
  program: Buffer | undefined,
  filterArguments: string[],
  held: HeldBindSources | undefined,
  lower: (subprocess: Pick<ChildProcess, "pid">) => void,
): Promise<PreparedChild> {
  if (policy.network.kind !== "hosts") {
    const args = bubblewrapArguments(policy, { read: [], write: [] }, held);
    const descriptor = program === undefined ? undefined : openSeccompDescriptor(program);
    const closeDescriptor = closeBoth(closeOnce(descriptor), held);
    return {
      command: bubblewrap,
      arguments: [...filterArguments, ...args, "--", child.command, ...child.arguments],
      workdir: child.workdir,
      environment: child.environment,
      extraStdio: [descriptor ?? "ignore", ...(held?.descriptors ?? [])],
      started: (subprocess) => {
        lower(subprocess);
        closeDescriptor();
      },
      release: async () => closeDescriptor(),
      ownPidNamespace: true,
    };
  }
  const proxyUrl = `http://127.0.0.1:${BRIDGE_PORT}`;
  const proxyEnvironment: Record<string, string> = { NO_PROXY: "", no_proxy: "" };
  for (const name of PROXY_VARIABLES) {
    proxyEnvironment[name] = proxyUrl;
    proxyEnvironment[name.toLowerCase()] = proxyUrl;
  }
  const proxyOptions = { privateAddresses: policy.network.privateAddresses };
  const handoff = handoffProgram(policy.searchPath);
  if (handoff !== undefined) {
    // The proxy's server accepts from the listener the sandbox hands over: no socket of its own.
    const proxy = unstartedNetworkProxy(policy.network.rules, {}, proxyOptions);
    const bindArguments = bubblewrapArguments(policy, { read: [handoff.perl], write: [] }, held);
    const descriptor = program === undefined ? undefined : openSeccompDescriptor(program);
    const closeDescriptor = closeBoth(closeOnce(descriptor), held);
    const invocation = handoffInvocation(
      handoff,
      BRIDGE_PORT,
      sandboxPriority(policy.limits),
      [child.command, ...child.arguments],
      { ...child.environment, ...proxyEnvironment },
    );
    let listener: HandedListener | undefined;
    let releasedHandoff: Promise<void> | undefined;
    return {
      command: bubblewrap,
      arguments: [...filterArguments, ...bindArguments, "--", ...invocation.arguments],
      workdir: child.workdir,
      environment: invocation.environment,
      extraStdio: [descriptor ?? "ignore", "ipc", ...(held?.descriptors ?? [])],
      started: (subprocess) => {
        lower(subprocess);
        closeDescriptor();
        listener ??= serveHandedListener(subprocess as ChildProcess, (handle) => proxy.server.listen(handle));
      },
      release: () =>
        (releasedHandoff ??= (async () => {
          closeDescriptor();
          listener?.close();
          await proxy.close();
        })()),
      ownPidNamespace: true,
    };
  }
  // The node bridge's proxy listens on a socket in a folder of its own, hidden from every
  // sandbox: only the daemon's end of the bridge's channel connects to it.
  // One mkdir(2) at once: through the thread pool it waited for a free thread, under load for
  // milliseconds, on every host-list call (and so does its removal, removeSocketsFolder).
  const args = bubblewrapArguments(policy, { read: [process.execPath], write: [] }, held);
  const folder = mkdtempSync(path.join(proxySocketsFolder(), "net-"));
  const socketPath = path.join(folder, "proxy.sock");
  let proxy: NetworkProxy;
  try {
    proxy = await startNetworkProxy(socketPath, policy.network.rules, {}, proxyOptions);
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  const descriptor = program === undefined ? undefined : openSeccompDescriptor(program);
  const closeDescriptor = closeBoth(closeOnce(descriptor), held);
  const connectProxy = (): net.Socket => net.connect({ path: socketPath, allowHalfOpen: true });
  const releaseProxy = async (): Promise<void> => {
    closeDescriptor();
    await proxy.close();
    await removeSocketsFolder(folder);
  };
  let channel: BridgeChannel | undefined;
  let released: Promise<void> | undefined;
  return {
    command: bubblewrap,
    arguments: [
      ...filterArguments,
      ...args,
      "--",
      process.execPath,
      "-e",
      BRIDGE_CODE,
      String(BRIDGE_PORT),
      String(sandboxPriority(policy.limits)),
      child.command,
      ...child.arguments,
    ],
    workdir: child.workdir,
    environment: { ...child.environment, ...proxyEnvironment },
    extraStdio: [descriptor ?? "ignore", "pipe", ...(held?.descriptors ?? [])],
    started: (subprocess) => {
      lower(subprocess);
      closeDescriptor();
      const end = subprocess.stdio[BRIDGE_CHANNEL_DESCRIPTOR];
      if (channel !== undefined || !(end instanceof Duplex)) return;
      channel = startBridgeChannel(end, { accept: connectProxy });
    },
    release: () =>
      (released ??= (async () => {
        channel?.close();
        await releaseProxy();
      })()),
    ownPidNamespace: true,
  };
}

/** Closes the filter's descriptor and the held bind sources, once. */
function closeBoth(closeDescriptor: () => void, held: HeldBindSources | undefined): () => void {
  return () => {
    closeDescriptor();
    held?.close();
  };
}

/**
 * Removes a proxy's folder once its server closed, which unlinked the socket: one rmdir(2) for the
 * empty folder, at once (a recursive rm looks at it first, several round trips to the thread pool
 * on every host-list call), and the recursive rm only when something is left in it.
 */
async function removeSocketsFolder(folder: string): Promise<void> {
  try {
    rmdirSync(folder);
  } catch {
    await rm(folder, { recursive: true, force: true });
  }
}
