/**
 * The tables of named tokens and of the audit trail (migration 11). `agentd_token_changes` counts
 * every change to the tokens, so each node reads the tokens again only when it moved. The audit
 * table is append-only: a trigger refuses UPDATE and DELETE.
 */
export const ACCESS_TABLES_SQL = `
  CREATE TABLE agentd_tokens (
    name text PRIMARY KEY,
    role text NOT NULL,
    hash text NOT NULL UNIQUE,
    created_at text NOT NULL,
    created_by text
  );
  CREATE SEQUENCE agentd_token_changes;
  CREATE TABLE agentd_audit (
    id text PRIMARY KEY,
    entry jsonb NOT NULL
  );
  CREATE FUNCTION agentd_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'agentd_audit is append-only'; END;
  $$;
  CREATE TRIGGER agentd_audit_append_only BEFORE UPDATE OR DELETE ON agentd_audit
    FOR EACH ROW EXECUTE FUNCTION agentd_audit_append_only();
`;
