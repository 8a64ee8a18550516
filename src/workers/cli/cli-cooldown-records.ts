/** A CLI tool resting after a quota or rate-limit failure: runs go straight to the fallback. */
export interface CliCooldown {
  tool: string;
  until: Date;
  kind: "quota" | "rate_limit";
  message: string;
}

/**
 * Where the CLI tools' cooldowns are kept (the store's `cooldowns`): `<data_dir>/cli-cooldowns.json`
 * with the files backend, a table every node reads with PostgreSQL. `active` is asked before every
 * CLI run, so it answers from memory.
 */
export interface CliCooldownRecords {
  /** The tool's cooldown while it lasts; undefined once it expired. */
  active(tool: string): CliCooldown | undefined;
  start(cooldown: CliCooldown): void;
}

/**
 * Cooldowns whose message is masked before it is kept: the message is the CLI's own failure text,
 * which may quote what the tool was given, and it is written to `data_dir` or the shared database.
 */
export function maskingCooldowns(
  records: CliCooldownRecords,
  redactText: (text: string) => string,
): CliCooldownRecords {
  return {
    active: (tool) => records.active(tool),
    start: (cooldown) => records.start({ ...cooldown, message: redactText(cooldown.message) }),
  };
}
