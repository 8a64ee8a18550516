import path from "node:path";
import type { Clock } from "../clock/clock.js";
import type { Config } from "../config/config-schema.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { DefinitionSnapshot } from "../definitions/definition-snapshot.js";
import type { AgentEvent } from "../events/agent-event.js";
import type { EventHub } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import type { SandboxHost } from "../sandbox/sandbox-host.js";
import type { SecretRedactor } from "../secrets/secret-redactor.js";
import type { StorageGate } from "../util/storage-gate.js";
import { type OwedRun, OwedRunEnds } from "../util/owed-run-ends.js";
import type { Vault } from "../vault/vault.js";
import { DeliveryService } from "./delivery-service.js";
import { targetsOf } from "./delivery-targets.js";
import { ClusterDeliveryStore } from "./cluster-delivery-store.js";
import { FilesDeliveryStore } from "./files-delivery-store.js";
import type { SharedDeliveryRows } from "../store/shared-delivery-rows.js";
import { NotifyToolSource } from "./notify-tool.js";
import { runTreeOf } from "./run-tree.js";
import type { DeliveryPage, DeliveryPageQuery, DeliveryStatus } from "./delivery-record.js";
import { type TargetStatus, targetStatuses } from "./target-status.js";
import {
  type RunDeliveries,
  type RunDeliveriesOptions,
  deliverRunOutcomes,
  linkOf,
} from "./run-deliveries.js";

export interface DeliveriesOptions {
  /** With its secrets resolved. */
  config: Config;
  bus: EventHub;
  clock: Clock;
  vault: Vault;
  redactor: SecretRedactor;
  logger: Logger;
  definitions: () => DefinitionSnapshot;
  sandbox: SandboxHost;
  storage?: StorageGate | undefined;
  node?: string | undefined;
  /** The cluster's deliveries (PostgreSQL store); absent: `<data_dir>/deliveries.json`. */
  shared?: SharedDeliveryRows | undefined;
  /**
   * A run's events as its log keeps them: `notify` counts what a run resumed after a restart sent
   * before it. Absent: each daemon counts from nothing (`agentd run`).
   */
  runEvents?: ((run: string, agent: string) => Promise<AgentEvent[]>) | undefined;
}

/** How often a node of a cluster looks for deliveries of nodes that died: the store's lease. */
function adoptEvery(config: Config): number {
  return config.store.lease;
}

/** Deliveries read to tell each target's health: every one kept (a thousand finished, and the open ones). */
const DELIVERIES_READ_FOR_HEALTH = 5_000;

/** What the API serves of deliveries: pages of them, the targets with their health, the counts. */
export interface DeliveriesView {
  /** `GET /deliveries`: on a cluster, every node's. */
  page(query: DeliveryPageQuery): Promise<DeliveryPage>;
  /** `GET /deliveries/targets`: every configured target with its health. */
  targets(): Promise<TargetStatus[]>;
  /** The deliveries this daemon holds, by status (`/metrics`: each node counts its own). */
  counts(): Record<DeliveryStatus, number>;
}

/** Deliveries as the composition root wires them: the service, the notify tool, and the bus followed. */
export interface Deliveries {
  readonly service: DeliveryService;
  /** What the API serves. */
  readonly view: DeliveriesView;
  /** The `notify` tool, for the tool executor's sources. */
  readonly notifyTools: NotifyToolSource;
  /** Loads and resumes the kept deliveries; call before any run can end. */
  load(): Promise<void>;
  /** Follows runs' ends and waits on the bus. */
  follow(runs: RunDeliveriesOptions["runs"]): void;
  /**
   * Decides the deliveries of runs that ended before this start without them (a kill -9 between a
   * run's end and its deliveries); call after `follow` and the runs' crash recovery.
   */
  recover(): Promise<void>;
  /** The daemon's URL, for dashboard links when config `deliveries.dashboard_url` is not set. */
  setDashboardUrl(url: string): void;
  /** Waits up to `waitMilliseconds` for deliveries being decided or sent, then stops (the rest resume at the next start). */
  close(waitMilliseconds?: number): Promise<void>;
}

/** Builds the deliveries of the daemon (and of `agentd run`): files store in data_dir, one service. */
export function createDeliveries(options: DeliveriesOptions): Deliveries {
  const { config, logger } = options;
  const settings = config.deliveries;
  const definitionOf = (agent: string): AgentDefinition | undefined => options.definitions().get(agent);
  const service = new DeliveryService({
    store:
      options.shared === undefined
        ? new FilesDeliveryStore({
            dataDirectory: config.data_dir,
            logger,
            now: () => options.clock.now(),
            storage: options.storage,
          })
        : new ClusterDeliveryStore(options.shared),
    events: options.bus,
    clock: options.clock,
    vault: options.vault,
    redactor: options.redactor,
    config: settings,
    definitionOf,
    placeOf: (definition) => ({
      workdir: definition.workdir,
      sandbox: options.sandbox.policyFor({
        settings: definition.sandbox,
        workdir: definition.workdir,
        owner: `agent "${definition.id}"`,
        hookCommands: definition.hooks.map((hook) => hook.command),
      }),
    }),
    logger,
  });
  let dashboardUrl = settings.dashboard_url;
  const links = { dashboardUrl: () => dashboardUrl };
  let followed: RunDeliveriesOptions["runs"] | undefined;
  // Notifications before this are read from the runs' logs; after it, counted in memory.
  const countingSince = options.clock.now();
  const notifyTools = new NotifyToolSource(
    async (definition, runId, message) => {
      const targets = targetsOf(definition.frontmatter.deliver, settings).filter(({ target }) =>
        target.when.includes("agent"),
      );
      const link = linkOf(links, runId);
      for (const target of targets) {
        await service.deliver({
          agent: definition.id,
          run: runId,
          when: "agent",
          target,
          facts: {
            agent: definition.id,
            run: runId,
            status: "running",
            when: "agent",
            message,
            ...(link ? { link } : {}),
          },
        });
      }
      return targets.length;
    },
    () => {
      if (followed === undefined) return undefined;
      const runEvents = options.runEvents;
      return runTreeOf(
        followed,
        runEvents === undefined
          ? undefined
          : { read: { runs: followed, runEvents }, since: countingSince, now: () => options.clock.now() },
      );
    },
  );
  let following: RunDeliveries | undefined;
  const owed = new OwedRunEnds(
    path.join(config.data_dir, "follow-ups", "deliveries.jsonl"),
    options.node,
    options.storage,
  );
  let owedAtStart: OwedRun[] = [];
  let stopAdopting: (() => void) | undefined;
  const adoptLater = () => {
    stopAdopting = options.clock.setTimer(() => {
      void service
        .adopt()
        .catch((error: unknown) =>
          logger.warn({ err: error }, "could not look for deliveries of nodes that stopped"),
        )
        .finally(() => {
          if (stopAdopting !== undefined) adoptLater();
        });
    }, adoptEvery(config));
  };
  const view: DeliveriesView = {
    page: (query) => service.page(query),
    counts: () => service.counts(),
    targets: async () => {
      const snapshot = options.definitions();
      const definitions = [...new Set(snapshot.agents.map((agent) => agent.id))].flatMap((id) => {
        const definition = snapshot.get(id);
        return definition === undefined ? [] : [definition];
      });
      const { deliveries } = await service.page({ limit: DELIVERIES_READ_FOR_HEALTH });
      return targetStatuses(definitions, settings, deliveries, options.redactor.redactText);
    },
  };
  return {
    service,
    view,
    notifyTools,
    load: async () => {
      await service.start().catch((error: unknown) => {
        logger.error(
          { err: error },
          "could not read the deliveries kept; those not sent before are not resumed",
        );
      });
      try {
        owedAtStart = owed.load();
      } catch (error) {
        logger.error(
          { err: error },
          "could not read the runs owed deliveries; those of runs that ended just before a crash are not sent",
        );
      }
      if (options.shared !== undefined) adoptLater();
    },
    recover: async () => {
      const runs = owedAtStart;
      owedAtStart = [];
      await following?.recover(runs).catch((error: unknown) => {
        logger.error(
          { err: error },
          "could not decide the deliveries of runs that ended just before a crash",
        );
      });
    },
    follow: (runs) => {
      followed = runs;
      following ??= deliverRunOutcomes({
        feed: options.bus,
        service,
        config: settings,
        definitionOf,
        runs,
        dashboardUrl: links.dashboardUrl,
        node: options.node,
        owed,
        logger,
      });
    },
    setDashboardUrl: (url) => {
      dashboardUrl = settings.dashboard_url ?? url;
    },
    close: async (waitMilliseconds = 0) => {
      following?.unsubscribe();
      const stop = stopAdopting;
      stopAdopting = undefined;
      stop?.();
      if (waitMilliseconds > 0) {
        await waitAtMost(
          (async () => {
            await following?.settled();
            await service.idle();
          })(),
          waitMilliseconds,
          options.clock,
        );
      }
      await service.close();
      owed.close();
    },
  };
}

function waitAtMost(work: Promise<void>, milliseconds: number, clock: Clock): Promise<void> {
  return new Promise((resolve) => {
    const cancel = clock.setTimer(resolve, milliseconds);
    void work.finally(() => {
      cancel();
      resolve();
    });
  });
}
