import { userInfo } from "node:os";

/** The local user running a command: the name of the `cli` actor in the audit trail. */
export function localUserName(): string {
  try {
    return userInfo().username || "unknown";
  } catch {
    return "unknown";
  }
}
