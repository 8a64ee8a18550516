import type { Command } from "commander";
import { loadConfig } from "../../config/load-config.js";
import type { AgentDefinition } from "../../definitions/agent-definition.js";
import { loadDefinitions } from "../../definitions/load-definitions.js";
import { kindOf, nameOf } from "../../triggers/trigger-schema.js";
import type { GlobalOptions } from "../output.js";

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
}): Promise<TriggerListing[]> {
  const { config } = loadConfig({ file: options.config, cwd: options.cwd ?? process.cwd() });
  const snapshot = await loadDefinitions(config);
  const ids = [...new Set(snapshot.agents.map((status) => status.id))];
  return ids.flatMap((id) => {
    const definition = snapshot.get(id);
    return definition === undefined ? [] : listingsOf(definition);
  });
}

function listingsOf(definition: AgentDefinition): TriggerListing[] {
  const { enabled } = definition.frontmatter;
  return definition.frontmatter.triggers.map((trigger, index) => {
    const base = { agent: definition.id, kind: kindOf(trigger), name: nameOf(trigger, index), enabled };
    if ("webhook" in trigger) {
      const filter = trigger.filter === undefined ? "" : ` filter ${JSON.stringify(trigger.filter)}`;
      return {
        ...base,
        detail: `POST /hooks/${definition.id}/${trigger.webhook} (${trigger.signature}, secret ${trigger.secret}, ${trigger.rate_limit.runs} runs per ${trigger.rate_limit.per / 1_000}s)${filter}`,
      };
    }
    if ("after" in trigger)
      return { ...base, detail: `after ${trigger.after.agent}: ${trigger.after.status.join(", ")}` };
    return {
      ...base,
      detail: `${trigger.watch.path} ${trigger.watch.glob} (debounce ${trigger.watch.debounce} ms)`,
    };
  });
}

export function registerTriggersCommand(program: Command): void {
  program
    .command("triggers")
    .description("list the agents' triggers: webhooks with their route, after and watch triggers")
    .action(async (_options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const listings = await listTriggers({ config: globals.config });
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
