import path from "node:path";
import type { Logger } from "../logging/logger.js";
import { IdempotentStarts } from "../runs/queue/idempotent-starts.js";
import { ClusterRateLimit } from "../triggers/cluster-rate-limit.js";
import { Triggers } from "../triggers/triggers.js";
import { dateSource } from "../clock/clock.js";
import type { DefinitionSource } from "./definition-source.js";
import type { OpenRunCore } from "./run-core.js";

/**
 * The daemon's triggers (src/triggers/) on its run core: runs started through the run manager once
 * per key (the Idempotency-Key store of `POST /agents/:id/runs`, so a delivery id is remembered
 * across restarts and across a cluster), secrets from the vault, payload files and watched folders
 * within each agent's sandbox.
 */
export function createTriggers(core: OpenRunCore<DefinitionSource>, logger: Logger): Triggers {
  const { runs, store, sandbox, bus, clock } = core;
  const idempotent = new IdempotentStarts(store.runs, dateSource(clock));
  return new Triggers({
    vault: core.secrets.vault,
    bus,
    clock,
    logger,
    webhookBodyLimitBytes: core.config.triggers.webhook_body_limit,
    redact: core.secrets.redactor.redactText,
    owedFile: path.join(core.config.data_dir, "follow-ups", "after-triggers.jsonl"),
    storage: store.storage,
    rateLimit: store.triggerStarts && new ClusterRateLimit(store.triggerStarts, clock, logger),
    runs: {
      startOnce: (agentId, task, trigger, key) => runs.startOnce(agentId, task, trigger, key),
      recorded: (agentId, key) => idempotent.recorded(agentId, key),
      stored: (agentId, key) => idempotent.stored(agentId, key),
      get: (id) => runs.get(id),
      find: (id) => runs.find(id),
    },
    sandboxOf: (definition) =>
      sandbox.policyFor({
        settings: definition.sandbox,
        workdir: definition.workdir,
        owner: `agent "${definition.id}"`,
      }),
  });
}
