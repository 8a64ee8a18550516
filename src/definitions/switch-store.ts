import type { SwitchNote } from "./switch-note.js";

/**
 * Where the operators' switches are kept: a file in data_dir (one daemon), or the cluster's
 * database, shared by every node (src/store/postgres/postgres-agent-switches.ts).
 */
export interface SwitchStore {
  /** Every agent an operator turned off, with who did and when. */
  load(): Promise<Map<string, SwitchNote>>;
  /**
   * Turns the agent off (with its note) or back on (`undefined`); answers whether anything changed
   * (disabling a disabled agent keeps its first note).
   */
  write(agentId: string, note: SwitchNote | undefined): Promise<boolean>;
  /** Whether other processes (the other nodes of a cluster) write it too: then it is read again each second. */
  readonly shared: boolean;
  close?(): Promise<void>;
}
