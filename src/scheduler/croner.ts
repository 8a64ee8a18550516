import { createRequire } from "node:module";
import type * as Croner from "croner";

let loaded: typeof Croner | undefined;

/**
 * croner's `Cron`, loaded (synchronously, its CommonJS build) the first time a cron expression is
 * checked or scheduled: `agentd run` of an agent without a schedule, and a daemon whose agents have
 * none, never load it. Every caller goes through here, so it is loaded once.
 */
export function cronClass(): typeof Croner.Cron {
  loaded ??= createRequire(import.meta.url)("croner") as typeof Croner;
  return loaded.Cron;
}
