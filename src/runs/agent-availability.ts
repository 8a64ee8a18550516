import type { AgentDefinition } from "../definitions/agent-definition.js";

/**
 * What the run manager needs to know about an agent when a run is asked for: a valid definition
 * (the last valid version when the file is currently broken), a disabled one, or only errors.
 */
export type AgentAvailability =
  | { state: "ready"; definition: AgentDefinition }
  | {
      state: "disabled";
      definition: AgentDefinition;
      /** An operator turned it off (its file says `enabled: true`): who and when. */
      switchedOff?: { at: string; by: string } | undefined;
    }
  | { state: "invalid"; errors: string[] };

/** Looks an agent up by id; undefined when no such agent exists. */
export type AgentLookup = (agentId: string) => AgentAvailability | undefined;
