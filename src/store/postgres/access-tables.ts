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

/**
 * Migration 15: the audit table still refuses every UPDATE, and every DELETE but of rows older than
 * the cutoff that a retention prune sets for its own transaction (`agentd.audit_prune_before`, an
 * entry id prefix): retention (`retention.audit_days`) can delete old entries, nothing else can.
 */
export const AUDIT_RETENTION_SQL = `
  CREATE OR REPLACE FUNCTION agentd_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE'
        AND OLD.id < coalesce(nullif(current_setting('agentd.audit_prune_before', true), ''), '') THEN
        RETURN OLD;
      END IF;
      RAISE EXCEPTION 'agentd_audit is append-only';
    END;
  $$;
`;
