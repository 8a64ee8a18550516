/**
 * The cluster's queue order from the database (migration 18): each run row gets its place from a
 * sequence when it is inserted, so runs posted at the same moment on two nodes get one order every
 * node agrees on, whatever their clocks (`created_at` is each node's corrected time, and two runs
 * may carry the same one). A run put back in the queue to resume keeps its place. The runs queued
 * when it is applied are numbered in their former order (`created_at`, `id`); older rows get 0
 * (adding a column with a constant default rewrites no row, however long the history).
 */
export const QUEUE_ORDER_SQL = `
  CREATE SEQUENCE agentd_queue_order;
  ALTER TABLE agentd_runs ADD COLUMN queue_position bigint NOT NULL DEFAULT 0;
  UPDATE agentd_runs AS r SET queue_position = o.position
    FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS position
          FROM agentd_runs WHERE status = 'queued') AS o
    WHERE r.id = o.id;
  SELECT setval('agentd_queue_order', (SELECT max(queue_position) + 1 FROM agentd_runs WHERE status = 'queued'), false)
    WHERE EXISTS (SELECT 1 FROM agentd_runs WHERE status = 'queued');
  ALTER TABLE agentd_runs ALTER COLUMN queue_position SET DEFAULT nextval('agentd_queue_order');
  ALTER SEQUENCE agentd_queue_order OWNED BY agentd_runs.queue_position;
  DROP INDEX agentd_runs_claimable;
  CREATE INDEX agentd_runs_claimable ON agentd_runs (queue_position)
    WHERE status = 'queued' AND claimed_by IS NULL;
`;

/**
 * Events a node reads of every agent, even of one it does not follow (migration 18 too): the
 * `approval` and `question` events and the status that ends a run, which pending approvals,
 * `after` triggers and deliveries need cluster-wide. Marked when written (older rows are not),
 * found through a partial index, so a node not following an agent reads only those of it.
 */
export const NOTABLE_EVENTS_SQL = `
  ALTER TABLE agentd_events ADD COLUMN notable boolean NOT NULL DEFAULT false;
  CREATE INDEX agentd_events_notable ON agentd_events (agent, id) WHERE notable;
`;
