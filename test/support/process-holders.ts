import { readFileSync, readdirSync } from "node:fs";

/** The pids whose command line holds `token` (a token no other process on the machine has). */
export function processesHolding(token: string): string[] {
  return readdirSync("/proc").filter((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      return readFileSync(`/proc/${entry}/cmdline`, "latin1").includes(token);
    } catch {
      return false;
    }
  });
}
