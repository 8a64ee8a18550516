/**
 * The schema change that retires the cluster-wide write lock (migration 13). Events were already
 * numbered from each agent's counter row; what the lock still did was let the change feed follow
 * runs, CLI cooldowns and control messages by one watermark on `change`. Those rows now carry the
 * id of the transaction that wrote them (`xid`, stamped by a trigger whenever `change` is set, so
 * every writer is covered without naming it), and the feed follows them by PostgreSQL snapshots:
 * a row is new when its transaction was not visible in the previous read's snapshot.
 */
export const PER_AGENT_ORDER_SQL = `
  CREATE FUNCTION agentd_stamp_xid() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' OR NEW.change IS DISTINCT FROM OLD.change THEN
      NEW.xid := pg_current_xact_id();
    END IF;
    RETURN NEW;
  END
  $$;
  ALTER TABLE agentd_runs ADD COLUMN xid xid8;
  ALTER TABLE agentd_cli_cooldowns ADD COLUMN xid xid8;
  ALTER TABLE agentd_control_messages ADD COLUMN xid xid8;
  CREATE TRIGGER agentd_runs_xid BEFORE INSERT OR UPDATE ON agentd_runs
    FOR EACH ROW EXECUTE FUNCTION agentd_stamp_xid();
  CREATE TRIGGER agentd_cli_cooldowns_xid BEFORE INSERT OR UPDATE ON agentd_cli_cooldowns
    FOR EACH ROW EXECUTE FUNCTION agentd_stamp_xid();
  CREATE TRIGGER agentd_control_messages_xid BEFORE INSERT OR UPDATE ON agentd_control_messages
    FOR EACH ROW EXECUTE FUNCTION agentd_stamp_xid();
  CREATE INDEX agentd_runs_xid ON agentd_runs (xid);
  CREATE INDEX agentd_cli_cooldowns_xid ON agentd_cli_cooldowns (xid);
  CREATE INDEX agentd_control_messages_node_xid ON agentd_control_messages (node, xid);
`;
