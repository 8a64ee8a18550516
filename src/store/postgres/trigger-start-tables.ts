/**
 * Webhook triggers' starts across the cluster (src/triggers/cluster-rate-limit.ts): one row per
 * start inside a trigger's window; older rows are deleted as the next start of the trigger is taken.
 */
export const TRIGGER_START_TABLES_SQL = `
  CREATE TABLE agentd_trigger_starts (
    id bigserial PRIMARY KEY,
    key text NOT NULL,
    started_at timestamptz NOT NULL
  );
  CREATE INDEX agentd_trigger_starts_key ON agentd_trigger_starts (key, started_at);
`;
