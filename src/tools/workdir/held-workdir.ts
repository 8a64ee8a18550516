import { closeSync, constants, openSync } from "node:fs";
import path from "node:path";
import type { SandboxPolicy } from "../../sandbox/sandbox-policy.js";
import { ensureWorkdir } from "./confine-path.js";
import { type FileAccess, fileAccessOf } from "./file-access.js";
import { HeldDirectory, realPathOf } from "./held-directory.js";
import type { WorkdirLocation } from "./workdir-components.js";

/** The workdir of one file-tool call, held open: every path of the call is resolved inside it. */
export interface HeldWorkdir extends WorkdirLocation {
  directory: HeldDirectory;
  /** What the agent's sandbox lets it do to a real path. */
  access: FileAccess;
}

/**
 * Opens the agent's workdir for one call (`create`: made first when missing). The workdir's own
 * path is the daemon's setting and is followed as configured; everything below it is looked up
 * through the held descriptor only. Release `directory` when the call ends.
 */
export function holdWorkdir(
  context: { workdir: string; sandbox: SandboxPolicy },
  options: { create: boolean },
): HeldWorkdir {
  const spelling = path.resolve(context.workdir);
  if (options.create) ensureWorkdir(spelling);
  const fd = openSync(spelling, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    const realPath = realPathOf(fd);
    return {
      directory: new HeldDirectory(fd, realPath, "."),
      realPath,
      spelling,
      access: fileAccessOf(context.sandbox),
    };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}
