import type { Command } from "commander";
import { z } from "zod";
import { clientOf, processIo } from "../daemon-client.js";
import { loadConfig } from "../../config/load-config.js";
import type { AgentDefinition } from "../../definitions/agent-definition.js";
import { loadDefinitions } from "../../definitions/load-definitions.js";
import { triggerDetail } from "../../triggers/trigger-detail.js";
import { kindOf, nameOf } from "../../triggers/trigger-schema.js";
import type { GlobalOptions } from "../output.js";
import { vaultMasking } from "../vault-masking.js";
import { terminalSafeLine } from "../../util/terminal-safe-text.js";

/** One trigger as `agentd triggers` prints it. */
export interface TriggerListing {
  agent: string;
  kind: "webhook" | "after" | "watch";
  name: string;
  /** The route (webhook), the agent and statuses followed (after), the folder and glob (watch). */
  detail: string;
  enabled: boolean;
}

/** Every trigger of the agents the daemon of this config would serve, read from the files. */
export async function listTriggers(options: {
  config?: string | undefined;
  cwd?: string;
  environment?: NodeJS.ProcessEnv;
}): Promise<{ listings: TriggerListing[]; vaultProblem?: string }> {
  const environment = options.environment ?? process.env;
  const { config } = loadConfig({ file: options.config, cwd: options.cwd ?? process.cwd(), environment });
  const snapshot = await loadDefinitions(config);
  const ids = [...new Set(snapshot.agents.map((status) => status.id))];
  const listings = ids.flatMap((id) => {
    const definition = snapshot.get(id);
    return definition === undefined ? [] : listingsOf(definition);
  });
  // A filter or a watched path may quote a secret's value: masked as GET /triggers masks it.
  const masking = await vaultMasking(config, snapshot, environment);
  return {
    listings: masking.mask(listings),
    ...(masking.problem === undefined ? {} : { vaultProblem: masking.problem }),
  };
}

function listingsOf(definition: AgentDefinition): TriggerListing[] {
  const { enabled } = definition.frontmatter;
  return definition.frontmatter.triggers.map((trigger, index) => ({
    agent: definition.id,
    kind: kindOf(trigger),
    name: nameOf(trigger, index),
    enabled,
    detail: triggerDetail(definition.id, trigger),
  }));
}

export function registerTriggersCommand(program: Command): void {
  program
    .command("triggers")
    .description("list the agents' triggers: webhooks with their route, after and watch triggers")
    .option("--health", "ask the running daemon: each trigger's counts, last outcome and last error")
    .action(async (options: { health?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      if (options.health === true) {
        await printHealth(command);
        return;
      }
      const { listings, vaultProblem } = await listTriggers({ config: globals.config });
      if (vaultProblem !== undefined) process.stderr.write(`warning: ${vaultProblem}\n`);
      if (globals.json) {
        for (const listing of listings) process.stdout.write(`${JSON.stringify(listing)}\n`);
        return;
      }
      if (listings.length === 0) {
        process.stdout.write("no triggers\n");
        return;
      }
      for (const listing of listings) {
        const off = listing.enabled ? "" : "  (agent disabled)";
        process.stdout.write(
          `${listing.agent}  ${listing.kind.padEnd(7)}  ${listing.name}  ${listing.detail}${off}\n`,
        );
      }
    });
}

const TriggerHealthListSchema = z.object({
  triggers: z.array(
    z.object({
      agent: z.string(),
      name: z.string(),
      kind: z.string(),
      last_fired_at: z.string().nullable(),
      last_outcome: z.string().nullable(),
      counts: z.record(z.string(), z.number()),
      last_error: z.string().nullable(),
      watching: z.boolean().optional(),
    }),
  ),
});

/** `agentd triggers --health`: `GET /triggers` of the running daemon, one line per trigger. */
async function printHealth(command: Command): Promise<void> {
  const { client, json } = clientOf(command, processIo);
  const { triggers } = await client.get("/triggers", TriggerHealthListSchema);
  if (json) for (const trigger of triggers) processIo.out(JSON.stringify(trigger));
  else if (triggers.length === 0) processIo.out("no triggers");
  else {
    for (const trigger of triggers) {
      const counts = Object.entries(trigger.counts)
        .filter(([, count]) => count > 0)
        .map(([outcome, count]) => `${outcome} ${count}`)
        .join(", ");
      const watching = trigger.watching === false ? "  (watched by another node)" : "";
      const error = trigger.last_error === null ? "" : `  last error: ${trigger.last_error}`;
      // An error may quote what reached the trigger: shown, never obeyed by the terminal.
      processIo.out(
        terminalSafeLine(
          `${trigger.agent}  ${trigger.kind.padEnd(7)}  ${trigger.name}  last fired ${trigger.last_fired_at ?? "never"}  ${counts || "nothing yet"}${watching}${error}`,
        ),
      );
    }
  }
}
