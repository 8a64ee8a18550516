/** One delivery as a cluster's store keeps it: the record as JSON text, and what claims go by. */
export interface DeliveryRow {
  id: string;
  agent: string;
  /** `pending` and `retrying` are open: a node must still send them. */
  status: string;
  /** The whole delivery record, as JSON (src/deliveries/delivery-record.ts reads it). */
  record: string;
}

/** Which deliveries a page holds (`GET /deliveries`): newest first, ids below `before`. */
export interface DeliveryRowQuery {
  status?: string | undefined;
  agent?: string | undefined;
  run?: string | undefined;
  /** Only ids that sort before this one (the last id of the page before). */
  before?: string | undefined;
  limit: number;
}

/**
 * The deliveries of a cluster (PostgreSQL store): each row held by the node that made or adopted
 * it. A node writes only the rows it holds; the open rows of a node whose lease lapsed are adopted
 * by one other node (a claim in one statement: never by two), which sends them.
 */
export interface SharedDeliveryRows {
  /** Inserts new rows as this node's and updates the rows this node holds; others are left alone. */
  write(rows: readonly DeliveryRow[]): Promise<void>;
  /**
   * Claims the open rows of nodes no longer in the cluster (their lease lapsed) and answers every
   * open row this node holds now, each as its record's JSON.
   */
  adopt(): Promise<string[]>;
  /** The cluster's deliveries, whichever node holds them, newest first: each record's JSON. */
  page(query: DeliveryRowQuery): Promise<string[]>;
}
