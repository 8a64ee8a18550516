/**
 * The cluster's deliveries (src/deliveries/): one row per delivery, held by one node (`claimed_by`)
 * that sends it; the open rows of a node that died are claimed by another.
 */
export const DELIVERY_TABLES_SQL = `
  CREATE TABLE agentd_deliveries (
    id text PRIMARY KEY,
    agent text NOT NULL,
    status text NOT NULL,
    record text NOT NULL,
    claimed_by text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX agentd_deliveries_open ON agentd_deliveries (claimed_by)
    WHERE status IN ('pending', 'retrying');
`;
