import type { PermissionSubject } from "../../permissions/permission-check.js";
import { resolvedInCall } from "../../sandbox/cached-sandbox-mounts.js";
import type { ToolContext } from "../tool-definition.js";
import { confinePath } from "../workdir/confine-path.js";

/**
 * What `tool(pattern)` rules of a file tool match: the path as the model wrote it and the path
 * relative to the workdir after resolution, so `read_file(src/*)` holds however the path is
 * spelled and `read_file(secrets/*)` also catches `./link-to-secrets/key`. A path that leaves the
 * workdir is refused here already (PATH_ESCAPE), before any rule or approval. The workdir's real
 * path is the one the call's sandbox policy found a moment before (resolvedInCall), not resolved
 * a second time.
 */
export function pathSubject(
  context: Pick<ToolContext, "workdir" | "sandbox">,
  requested: string,
): PermissionSubject {
  const { relative } = confinePath(context.workdir, requested, resolvedInCall(context.sandbox));
  return { kind: "texts", texts: [requested, relative] };
}
