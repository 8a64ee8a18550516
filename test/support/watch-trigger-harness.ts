import { mkdirSync } from "node:fs";
import type { watch } from "chokidar";
import path from "node:path";
import type { AgentDefinition } from "../../src/definitions/agent-definition.js";
import { createLogger } from "../../src/logging/logger.js";
import type { RunTrigger } from "../../src/run-vocabulary/run-record.js";
import type { SandboxPolicy } from "../../src/sandbox/sandbox-policy.js";
import { DeliveryRateLimit, type TriggerRateLimit } from "../../src/triggers/delivery-rate-limit.js";
import { TriggerHealth } from "../../src/triggers/trigger-health.js";
import type { TriggerRuns } from "../../src/triggers/trigger-runs.js";
import { WatchTriggers } from "../../src/triggers/watch-triggers.js";
import { makeDefinition } from "./make-definition.js";
import type { ManualClock } from "./manual-clock.js";

/** What a watch trigger started: each run's task and trigger, in order. */
export interface StartedRun {
  task: string;
  trigger: RunTrigger;
}

/**
 * Watch triggers on `clock`, as the daemon makes them (a local rate limit, silent logs, no
 * sandbox), whose runs are only recorded in `started`; `rateLimit` replaces the local one.
 */
export function watchTriggersOn(
  clock: ManualClock,
  options: { maxEntries?: number; rateLimit?: TriggerRateLimit; watchFolder?: typeof watch } = {},
): { watches: WatchTriggers; health: TriggerHealth; started: StartedRun[] } {
  const started: StartedRun[] = [];
  const runs: TriggerRuns = {
    startOnce: async (_agent, task, trigger) => {
      started.push({ task, trigger });
      return { run: { id: `r_${started.length}`, status: "queued" } as never, duplicate: false };
    },
    recorded: () => undefined,
    stored: () => Promise.resolve(undefined),
    get: () => undefined,
    find: async () => undefined,
  };
  const health = new TriggerHealth(clock);
  const watches = new WatchTriggers({
    runs,
    clock,
    rateLimit: new DeliveryRateLimit(clock),
    health,
    logger: createLogger({ level: "silent", pretty: false }),
    sandboxOf: () => ({ mode: "off" }) as SandboxPolicy,
    ...options,
  });
  return { watches, health, started };
}

/** An agent `watcher` in `root` whose trigger `inbox` watches `root/inbox` (made here), 1 s debounce. */
export function inboxWatcher(root: string, rateLimit: { runs: number; per: string }): AgentDefinition {
  mkdirSync(path.join(root, "inbox"), { recursive: true });
  return makeDefinition({
    id: "watcher",
    workdir: root,
    frontmatter: {
      triggers: [
        {
          watch: { path: "inbox", debounce: "1s" },
          name: "inbox",
          task: "Files: {{paths}}",
          rate_limit: rateLimit,
        },
      ],
    },
  });
}
