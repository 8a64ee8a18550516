import path from "node:path";
import { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import { replaceFile } from "../util/replace-file.js";
import { type SwitchNote, SwitchNoteSchema } from "./switch-note.js";
import type { SwitchStore } from "./switch-store.js";
import { readRegularFileSync } from "../util/read-regular-file.js";

/** Where a daemon keeps its operators' switches: `<data_dir>/agent-switches.json`. */
export function agentSwitchesFile(dataDirectory: string): string {
  return path.join(dataDirectory, "agent-switches.json");
}

const SwitchesFileSchema = z.object({ disabled: z.record(z.string(), SwitchNoteSchema) });

/**
 * Reads `<data_dir>/agent-switches.json` (none yet: every agent on, `undefined`); a corrupt file is
 * an error that says how to recover.
 */
export function readSwitchesFile(file: string): Map<string, SwitchNote> | undefined {
  let text: string;
  try {
    text = readRegularFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    if ((error as NodeJS.ErrnoException).code === "EISDIR")
      throw new AgentdError("STORE_CORRUPT", `${file} is a folder, not a switches file`, {
        file,
        hint: "move it aside (look at it, then delete it) and start again: with no switches file every agent is on",
        cause: error,
      });
    throw error;
  }
  try {
    return new Map(Object.entries(SwitchesFileSchema.parse(JSON.parse(text)).disabled));
  } catch (cause) {
    throw new AgentdError("STORE_CORRUPT", `${file} is not a valid switches file`, {
      file,
      hint: `fix or delete it (deleting it turns every agent an operator disabled back on)`,
      cause,
    });
  }
}

/**
 * The switches of one daemon, in `<data_dir>/agent-switches.json` (`{ "disabled": { "<id>": { by,
 * at } } }`), rewritten whole by temp file and rename on each change: a crash leaves the old or the
 * new file. Only the daemon that holds the folder writes it.
 */
export class FilesSwitchStore implements SwitchStore {
  readonly shared = false;
  readonly #file: string;
  #disabled: Map<string, SwitchNote>;

  constructor(dataDirectory: string) {
    this.#file = agentSwitchesFile(dataDirectory);
    this.#disabled = readSwitchesFile(this.#file) ?? new Map();
  }

  async load(): Promise<Map<string, SwitchNote>> {
    return new Map(this.#disabled);
  }

  /** The file's state as read at construction or last written, without waiting. */
  current(): Map<string, SwitchNote> {
    return new Map(this.#disabled);
  }

  async write(agentId: string, note: SwitchNote | undefined): Promise<boolean> {
    if (this.#disabled.has(agentId) === (note !== undefined)) return false;
    const next = new Map(this.#disabled);
    if (note === undefined) next.delete(agentId);
    else next.set(agentId, note);
    await replaceFile(this.#file, `${JSON.stringify({ disabled: Object.fromEntries(next) }, null, 2)}\n`);
    this.#disabled = next;
    return true;
  }
}
