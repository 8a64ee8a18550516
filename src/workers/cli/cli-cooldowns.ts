import { z } from "zod";
import type { Logger } from "../../logging/logger.js";
import { replaceFileSync } from "../../util/replace-file.js";
import type { CliCooldown, CliCooldownRecords } from "./cli-cooldown-records.js";
import { readRegularFileSync } from "../../util/read-regular-file.js";

export type { CliCooldown } from "./cli-cooldown-records.js";

/** The name of the cooldowns file in `data_dir`. */
export const COOLDOWNS_FILE_NAME = "cli-cooldowns.json";

const CooldownSchema = z.object({
  until: z.iso.datetime(),
  kind: z.enum(["quota", "rate_limit"]),
  message: z.string(),
});
const CooldownFileSchema = z.record(z.string(), CooldownSchema);

export interface CliCooldownsOptions {
  /** `<data_dir>/cli-cooldowns.json`. */
  file: string;
  logger: Logger;
  now?: () => Date;
}

/**
 * The cooldown of each CLI tool, kept in a JSON file (replaced atomically on each change) so a
 * restarted daemon does not hammer a tool whose quota is still exhausted.
 */
export class CliCooldowns implements CliCooldownRecords {
  readonly #file: string;
  readonly #logger: Logger;
  readonly #now: () => Date;
  readonly #cooldowns = new Map<string, CliCooldown>();

  constructor(options: CliCooldownsOptions) {
    this.#file = options.file;
    this.#logger = options.logger;
    this.#now = options.now ?? (() => new Date());
    this.#load();
  }

  /** The tool's cooldown when it still runs; an expired one is forgotten. */
  active(tool: string): CliCooldown | undefined {
    const cooldown = this.#cooldowns.get(tool);
    if (!cooldown) return undefined;
    if (cooldown.until.getTime() > this.#now().getTime()) return cooldown;
    this.#cooldowns.delete(tool);
    this.#save();
    return undefined;
  }

  start(cooldown: CliCooldown): void {
    this.#cooldowns.set(cooldown.tool, cooldown);
    this.#save();
  }

  #load(): void {
    let text: string;
    try {
      text = readRegularFileSync(this.#file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        this.#logger.warn(
          { err: error, file: this.#file },
          "could not read the CLI cooldowns; starting without",
        );
      }
      return;
    }
    const parsed = parseCooldownFile(text);
    if (!parsed) {
      this.#logger.warn(
        { file: this.#file },
        "the CLI cooldowns file is not valid JSON of cooldowns; ignoring it",
      );
      return;
    }
    for (const [tool, cooldown] of Object.entries(parsed)) {
      this.#cooldowns.set(tool, {
        tool,
        until: new Date(cooldown.until),
        kind: cooldown.kind,
        message: cooldown.message,
      });
    }
  }

  #save(): void {
    const data = Object.fromEntries(
      [...this.#cooldowns].map(([tool, cooldown]) => [
        tool,
        { until: cooldown.until.toISOString(), kind: cooldown.kind, message: cooldown.message },
      ]),
    );
    try {
      replaceFileSync(this.#file, `${JSON.stringify(data, null, 2)}\n`);
    } catch (error) {
      this.#logger.error(
        { err: error, file: this.#file },
        "could not save the CLI cooldowns; they last until restart",
      );
    }
  }
}

function parseCooldownFile(text: string): z.infer<typeof CooldownFileSchema> | undefined {
  try {
    const parsed = CooldownFileSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
