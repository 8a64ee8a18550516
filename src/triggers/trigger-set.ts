import type { AgentDefinition } from "../definitions/agent-definition.js";
import {
  type AfterTriggerSettings,
  type TriggerSettings,
  type WatchTriggerSettings,
  type WebhookTriggerSettings,
  nameOf,
} from "./trigger-schema.js";

/** One trigger of a serving agent, with the definition it starts. */
export interface ArmedTrigger<Settings> {
  definition: AgentDefinition;
  name: string;
  settings: Settings;
}

/**
 * The triggers of the agents being served, indexed the ways they are reached: a webhook by agent
 * and name, an `after` by the agent it follows, the watches as a list. Rebuilt from scratch on
 * every change of the definitions (an invalid or disabled agent has none).
 */
export class TriggerSet {
  readonly #webhooks = new Map<string, ArmedTrigger<WebhookTriggerSettings>>();
  readonly #after = new Map<string, Array<ArmedTrigger<AfterTriggerSettings>>>();
  readonly watches: Array<ArmedTrigger<WatchTriggerSettings>> = [];
  /** Every trigger served, in the agents' order and each agent's file order. */
  readonly all: Array<ArmedTrigger<TriggerSettings>> = [];

  constructor(definitions: readonly AgentDefinition[]) {
    for (const definition of definitions) {
      if (!definition.frontmatter.enabled) continue;
      definition.frontmatter.triggers.forEach((settings, index) => {
        const name = nameOf(settings, index);
        this.all.push({ definition, name, settings });
        if ("webhook" in settings) {
          this.#webhooks.set(webhookKey(definition.id, name), { definition, name, settings });
        } else if ("after" in settings) {
          const followers = this.#after.get(settings.after.agent) ?? [];
          followers.push({ definition, name, settings });
          this.#after.set(settings.after.agent, followers);
        } else {
          this.watches.push({ definition, name, settings });
        }
      });
    }
  }

  /** The webhook trigger at `/hooks/<agent>/<name>`, if one is served. */
  webhook(agent: string, name: string): ArmedTrigger<WebhookTriggerSettings> | undefined {
    return this.#webhooks.get(webhookKey(agent, name));
  }

  /** The `after` triggers that follow `agent`'s runs. */
  followersOf(agent: string): ReadonlyArray<ArmedTrigger<AfterTriggerSettings>> {
    return this.#after.get(agent) ?? [];
  }

  /** The vault secrets the webhooks name. */
  secretNames(): string[] {
    return [...new Set([...this.#webhooks.values()].map((trigger) => trigger.settings.secret))];
  }
}

function webhookKey(agent: string, name: string): string {
  return `${agent}\u0000${name}`;
}
