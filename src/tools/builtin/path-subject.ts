import type { PermissionSubject } from "../../permissions/permission-check.js";
import { confinePath } from "../workdir/confine-path.js";

/**
 * What `tool(pattern)` rules of a file tool match: the path as the model wrote it and the path
 * relative to the workdir after resolution, so `read_file(src/*)` holds however the path is
 * spelled and `read_file(secrets/*)` also catches `./link-to-secrets/key`. A path that leaves the
 * workdir is refused here already (PATH_ESCAPE), before any rule or approval.
 */
export function pathSubject(workdir: string, requested: string): PermissionSubject {
  const { relative } = confinePath(workdir, requested);
  return { kind: "texts", texts: [requested, relative] };
}
