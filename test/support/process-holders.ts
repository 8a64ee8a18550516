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

/**
 * The pids whose command line holds `token` once the kernel has had up to `limitMilliseconds` to
 * finish ending them: a sandbox's PID namespace is emptied by the kernel as its init exits, which
 * bubblewrap's outer process may report a moment before (it passes on the command's exit status
 * as soon as the init tells it). A process that really outlived its call (a `sleep 400`) is still
 * there at the end.
 */
export async function processesOutliving(token: string, limitMilliseconds = 5_000): Promise<string[]> {
  const deadline = Date.now() + limitMilliseconds;
  let holding = processesHolding(token);
  while (holding.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    holding = processesHolding(token);
  }
  return holding;
}
