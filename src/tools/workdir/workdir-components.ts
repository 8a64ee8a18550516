import path from "node:path";
import { AgentdError } from "../../errors/agentd-error.js";
import { isWithin } from "../../util/path-within.js";

/** The two spellings of the workdir an absolute path may start with. */
export interface WorkdirLocation {
  /** Where the workdir really is, read back from its held descriptor. */
  realPath: string;
  /** The workdir as configured (absolute, possibly through symlinks). */
  spelling: string;
}

/**
 * The names below the workdir that `requested` leads to: relative to the workdir, or absolute
 * inside it (under either spelling). `.` and `..` are resolved lexically, as `confinePath` does;
 * a path that climbs above the workdir is refused with PATH_ESCAPE. Nothing is looked up here.
 */
export function componentsOf(workdir: WorkdirLocation, requested: string): string[] {
  return below(workdir, path.resolve(workdir.realPath, requested), requested);
}

/**
 * The names below the workdir that a symlink leads to: `target` read from a link whose folder is
 * `folder` (names below the workdir). A relative target is joined to that folder lexically; an
 * absolute one must name a place inside the workdir. `requested` is the path the call asked for.
 */
export function linkComponents(
  workdir: WorkdirLocation,
  folder: readonly string[],
  target: string,
  requested: string,
): string[] {
  return below(workdir, path.resolve(workdir.realPath, ...folder, target), requested);
}

function below(workdir: WorkdirLocation, absolute: string, requested: string): string[] {
  for (const prefix of [workdir.realPath, workdir.spelling]) {
    if (!isWithin(absolute, prefix)) continue;
    return path
      .relative(prefix, absolute)
      .split(path.sep)
      .filter((name) => name !== "");
  }
  throw new AgentdError("PATH_ESCAPE", `path "${requested}" leads outside the working directory`, {
    hint: `use a path inside ${workdir.realPath}; symlinks that point outside it are refused too`,
    details: { path: requested },
  });
}
