import { rename } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { Logger } from "../logging/logger.js";
import { parseJsonAs } from "../schema/parse-json-as.js";
import { LatestFileWrites } from "../util/latest-file-writes.js";
import type { StorageGate } from "../util/storage-gate.js";
import { DeliveryRecordSchema, type DeliveryPageQuery, type DeliveryRecord } from "./delivery-record.js";
import { readRegularFile } from "../util/read-regular-file.js";

/** Where deliveries are kept between starts. */
export interface DeliveryStore {
  /** Every delivery kept, oldest first. */
  load(): Promise<DeliveryRecord[]>;
  /** Replaces what is kept; resolves once it is safe from kill -9. */
  save(records: readonly DeliveryRecord[]): Promise<void>;
  /** Resolves once every save asked for is written. */
  settled(): Promise<void>;
  /** A cluster's store: claims the open deliveries of dead nodes, answers every open one held. */
  adopt?(): Promise<DeliveryRecord[]>;
  /**
   * A cluster's store: the deliveries of every node, newest first, as the store has them (at most
   * `limit`). Absent: a daemon's own deliveries are all it has, in memory.
   */
  page?(query: DeliveryPageQuery): Promise<DeliveryRecord[]>;
}

const DeliveriesFileSchema = z.object({ deliveries: z.array(z.unknown()) });

/**
 * Deliveries in `<data_dir>/deliveries.json`, replaced whole at each change (a temp file renamed
 * over it, the way run records are: a crash leaves the old or the new list, never a torn one).
 * Writes waiting behind one under way are merged into the newest. A file that cannot be read is
 * moved aside (`deliveries.json.damaged-<time>`) and the daemon starts with none.
 */
export class FilesDeliveryStore implements DeliveryStore {
  readonly #file: string;
  readonly #writes: LatestFileWrites;
  readonly #logger: Logger;
  readonly #now: () => number;

  constructor(options: {
    dataDirectory: string;
    logger: Logger;
    now: () => number;
    storage?: StorageGate | undefined;
  }) {
    this.#now = options.now;
    this.#file = path.join(options.dataDirectory, "deliveries.json");
    this.#writes = new LatestFileWrites(options.storage ? { storage: options.storage } : {});
    this.#logger = options.logger;
  }

  async load(): Promise<DeliveryRecord[]> {
    let text: string;
    try {
      text = await readRegularFile(this.#file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const file = parseJsonAs(DeliveriesFileSchema, text);
    if (file === undefined) {
      const aside = `${this.#file}.damaged-${this.#now()}`;
      await rename(this.#file, aside).catch(() => undefined);
      this.#logger.error(
        { file: this.#file, aside },
        "the deliveries file is damaged; moved aside, starting with none",
      );
      return [];
    }
    // A record that does not parse (written by a newer agentd) is left out, not fatal.
    return file.deliveries.flatMap((record) => {
      const parsed = DeliveryRecordSchema.safeParse(record);
      return parsed.success ? [parsed.data] : [];
    });
  }

  save(records: readonly DeliveryRecord[]): Promise<void> {
    return this.#writes.write(this.#file, `${JSON.stringify({ deliveries: records })}\n`);
  }

  settled(): Promise<void> {
    return this.#writes.settled();
  }
}
