import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import { replaceFile } from "../util/replace-file.js";

/** Where the operators' switches are kept: `<data_dir>/agent-switches.json`. */
export function agentSwitchesFile(dataDirectory: string): string {
  return path.join(dataDirectory, "agent-switches.json");
}

/** Who turned an agent off, and when. */
export const SwitchNoteSchema = z.object({
  /** ISO time of the change. */
  at: z.string(),
  /** The actor's kind and name, e.g. `token:ops` or `dashboard:admin`. */
  by: z.string(),
});
export type SwitchNote = z.infer<typeof SwitchNoteSchema>;

const SwitchesFileSchema = z.object({ disabled: z.record(z.string(), SwitchNoteSchema) });

/**
 * Agents an operator turned off (`agentd disable`, the dashboard's toggle, `POST
 * /agents/:id/disable`), kept in data_dir so a restart keeps them, beside the agent files rather
 * than in them: the operator's file is never rewritten. A switch only turns an agent off; an agent
 * whose file says `enabled: false` stays off whatever the switch says.
 */
export class AgentSwitches {
  readonly #file: string;
  #disabled: Map<string, SwitchNote>;
  readonly #listeners = new Set<() => void>();
  /** Changes one after the other, each written before the next is worked out: none is lost. */
  #writing: Promise<void> = Promise.resolve();

  private constructor(file: string, disabled: Map<string, SwitchNote>) {
    this.#file = file;
    this.#disabled = disabled;
  }

  /** Reads `<data_dir>/agent-switches.json` (none yet: every agent on); a corrupt file is an error. */
  static open(dataDirectory: string): AgentSwitches {
    const file = agentSwitchesFile(dataDirectory);
    let text: string | undefined;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    if (text === undefined) return new AgentSwitches(file, new Map());
    let parsed: z.output<typeof SwitchesFileSchema>;
    try {
      parsed = SwitchesFileSchema.parse(JSON.parse(text));
    } catch (cause) {
      throw new AgentdError("STORE_CORRUPT", `${file} is not a valid switches file`, {
        file,
        hint: `fix or delete it (deleting it turns every agent an operator disabled back on)`,
        cause,
      });
    }
    return new AgentSwitches(file, new Map(Object.entries(parsed.disabled)));
  }

  /** Who disabled the agent and when; undefined when no operator did. */
  disabled(agentId: string): SwitchNote | undefined {
    return this.#disabled.get(agentId);
  }

  /**
   * Turns the agent off (with who and when) or back on; resolves once the file is written.
   * Answers whether anything changed (disabling a disabled agent keeps its first note).
   */
  set(agentId: string, enabled: boolean, note: SwitchNote): Promise<boolean> {
    const done = this.#writing.then(() => this.#apply(agentId, enabled, note));
    this.#writing = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  }

  async #apply(agentId: string, enabled: boolean, note: SwitchNote): Promise<boolean> {
    if (this.#disabled.has(agentId) === !enabled) return false;
    const next = new Map(this.#disabled);
    if (enabled) next.delete(agentId);
    else next.set(agentId, note);
    await replaceFile(this.#file, `${JSON.stringify({ disabled: Object.fromEntries(next) }, null, 2)}\n`);
    this.#disabled = next;
    for (const listener of this.#listeners) listener();
    return true;
  }

  /** Calls `listener` after each change; answers the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
