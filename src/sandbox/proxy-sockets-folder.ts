import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

let folder: string | undefined;

/**
 * The folder (0700, made once per daemon, removed when it exits) that holds every child's network
 * proxy socket, each in a folder of its own. Hidden in every sandbox: with the seccomp filter off
 * (config lists `unix_sockets`), no agent may reach another agent's proxy and its host list.
 */
export function proxySocketsFolder(): string {
  if (folder === undefined) {
    const made = mkdtempSync(path.join(os.tmpdir(), "agentd-proxies-"));
    folder = made;
    process.once("exit", () => rmSync(made, { recursive: true, force: true }));
  }
  return folder;
}
