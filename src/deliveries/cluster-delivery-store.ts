import type { SharedDeliveryRows } from "../store/shared-delivery-rows.js";
import { parseJsonAs } from "../schema/parse-json-as.js";
import { DeliveryRecordSchema, type DeliveryPageQuery, type DeliveryRecord } from "./delivery-record.js";
import type { DeliveryStore } from "./files-delivery-store.js";

/**
 * Deliveries kept in the cluster's store (PostgreSQL): a delivery made on a node is a row that
 * node holds; the open deliveries of a node that died are adopted by one other node, which sends
 * them (`adopt`, called at start and then on a timer). Only records that changed since they were
 * last written are written, and only while this node holds them.
 */
export class ClusterDeliveryStore implements DeliveryStore {
  readonly #rows: SharedDeliveryRows;
  /** Each record's JSON as last written or read, by id: what `save` need not write again. */
  readonly #written = new Map<string, string>();
  #writing: Promise<void> = Promise.resolve();

  constructor(rows: SharedDeliveryRows) {
    this.#rows = rows;
  }

  load(): Promise<DeliveryRecord[]> {
    return this.adopt();
  }

  /** Claims the open deliveries of dead nodes; answers every open one this node holds. */
  async adopt(): Promise<DeliveryRecord[]> {
    const records = parseRecords(await this.#rows.adopt());
    for (const record of records) this.#written.set(record.id, JSON.stringify(record));
    return records;
  }

  /** Every node's deliveries: what `GET /deliveries` answers on any node of the cluster. */
  async page(query: DeliveryPageQuery): Promise<DeliveryRecord[]> {
    return parseRecords(await this.#rows.page(query));
  }

  save(records: readonly DeliveryRecord[]): Promise<void> {
    const changed = records.flatMap((record) => {
      const text = JSON.stringify(record);
      if (this.#written.get(record.id) === text) return [];
      return [{ id: record.id, agent: record.agent, status: record.status, record: text }];
    });
    const kept = new Set(records.map((record) => record.id));
    for (const id of this.#written.keys()) if (!kept.has(id)) this.#written.delete(id);
    // One write after another, in order: a later status never lands before an earlier one.
    const write = this.#writing.then(async () => {
      if (changed.length === 0) return;
      await this.#rows.write(changed);
      for (const row of changed) this.#written.set(row.id, row.record);
    });
    this.#writing = write.catch(() => undefined);
    return write;
  }

  settled(): Promise<void> {
    return this.#writing;
  }
}

/** Records as the store keeps them; one that does not parse (a newer agentd's) is left out. */
function parseRecords(texts: readonly string[]): DeliveryRecord[] {
  return texts.flatMap((text) => {
    const record = parseJsonAs(DeliveryRecordSchema, text);
    return record === undefined ? [] : [record];
  });
}
