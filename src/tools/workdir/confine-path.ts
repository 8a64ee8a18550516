import { lstatSync, mkdirSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";
import { AgentdError } from "../../errors/agentd-error.js";
import { isWithin } from "../../util/path-within.js";

/** A path a tool may use: where it really is, and how it reads relative to the workdir. */
export interface ConfinedPath {
  /** The real location (symlinks resolved); the tool opens this, never the path as given. */
  absolute: string;
  /** Relative to the workdir's real location, `/`-separated; `.` for the workdir itself. */
  relative: string;
  /** The workdir's real location. */
  root: string;
}

/** Symlinks followed before a chain counts as a loop (the kernel's limit, ELOOP). */
const MAX_SYMLINK_HOPS = 40;

/**
 * Resolves `requested` (relative to the workdir, or absolute) to where it really points and refuses
 * it with PATH_ESCAPE unless that place is the workdir or inside it. `..`, absolute paths outside,
 * and symlinks (of the file or of any folder on the way, dangling ones too) whose target leaves
 * the workdir are refused. A path that does not exist yet resolves through its nearest existing
 * ancestor, so a new file under a symlinked folder pointing outside is refused as well.
 * Synchronous because permission subjects are computed synchronously. `known`: real paths found
 * earlier in the same call, by the path as given (the workdir's is taken from there when found).
 */
export function confinePath(
  workdir: string,
  requested: string,
  known?: ReadonlyMap<string, string | undefined>,
): ConfinedPath {
  const root = known?.get(workdir) ?? realLocation(path.resolve(workdir));
  const absolute = realLocation(path.resolve(root, requested));
  if (!isWithin(absolute, root)) {
    throw new AgentdError("PATH_ESCAPE", `path "${requested}" leads outside the working directory`, {
      hint: `use a path inside ${root}; symlinks that point outside it are refused too`,
      details: { path: requested },
    });
  }
  return { absolute, relative: relativeTo(root, absolute), root };
}

/** `target` relative to `root`, `/`-separated; `.` for the root itself. */
export function relativeTo(root: string, target: string): string {
  const relative = path.relative(root, target);
  return relative === "" ? "." : relative.split(path.sep).join("/");
}

/** Creates the workdir when it is missing and returns its real location. */
export function ensureWorkdir(workdir: string): string {
  mkdirSync(workdir, { recursive: true });
  return realpathSync(workdir);
}

/**
 * The real location of `target`: realpath where it exists; otherwise the real location of its
 * parent joined with its name, following a dangling symlink to where it would create its target.
 */
function realLocation(target: string, hops = 0): string {
  if (hops > MAX_SYMLINK_HOPS) {
    throw new AgentdError("PATH_ESCAPE", `too many symlinks while resolving "${target}"`, {
      hint: "use a path without a symlink loop",
    });
  }
  try {
    // realpath(3): the same answer as Node's own realpath, which walks the path in JavaScript with
    // an lstat per folder (twice a file tool call, on every path the agent names).
    return realpathSync.native(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw describeFailure(target, error);
  }
  const link = symlinkTarget(target);
  if (link !== undefined) return realLocation(path.resolve(path.dirname(target), link), hops + 1);
  const parent = path.dirname(target);
  if (parent === target) return target;
  return path.join(realLocation(parent, hops), path.basename(target));
}

/** The target of `candidate` when it is a (dangling) symlink; undefined when nothing is there. */
function symlinkTarget(candidate: string): string | undefined {
  try {
    return lstatSync(candidate).isSymbolicLink() ? readlinkSync(candidate) : undefined;
  } catch {
    return undefined;
  }
}

function describeFailure(target: string, error: unknown): AgentdError {
  const code = (error as NodeJS.ErrnoException).code ?? "an error";
  return new AgentdError("TOOL_FAILED", `cannot resolve "${target}": ${code}`, { cause: error });
}
