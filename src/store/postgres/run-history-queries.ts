/**
 * SQL over `agentd_runs` that stays flat as history grows: each statement walks an index
 * (migration 7) for the rows it returns, never the whole table.
 */

/** The statuses of a run not finished yet, as an SQL list: such a run is never pruned. */
export const UNFINISHED_STATUSES_SQL = "('queued', 'running', 'paused', 'waiting')";

/**
 * Every agent that has a run, one index probe each (a loose index scan on
 * `agentd_runs_agent_created`): a `SELECT DISTINCT agent` would read every row.
 */
export const AGENTS_WITH_RUNS_SQL = `
  WITH RECURSIVE agents(agent) AS (
    (SELECT agent FROM agentd_runs ORDER BY agent LIMIT 1)
    UNION ALL
    SELECT (SELECT r.agent FROM agentd_runs AS r WHERE r.agent > agents.agent ORDER BY r.agent LIMIT 1)
    FROM agents WHERE agents.agent IS NOT NULL
  )
  SELECT agent FROM agents WHERE agent IS NOT NULL`;

/**
 * The runs a node holds from its start, oldest first: every unfinished run, each agent's newest
 * run, the finished runs that kept a checkpoint (resumable), and the newest `$1` runs of all
 * (what `GET /runs/:run` is most likely asked for).
 */
export const HELD_RUNS_SQL = `
  WITH RECURSIVE agents(agent) AS (
    (SELECT agent FROM agentd_runs ORDER BY agent LIMIT 1)
    UNION ALL
    SELECT (SELECT r.agent FROM agentd_runs AS r WHERE r.agent > agents.agent ORDER BY r.agent LIMIT 1)
    FROM agents WHERE agents.agent IS NOT NULL
  ),
  held(id) AS (
    SELECT id FROM agentd_runs WHERE status IN ${UNFINISHED_STATUSES_SQL}
    UNION
    SELECT newest.id FROM agents CROSS JOIN LATERAL (
      SELECT r.id FROM agentd_runs AS r WHERE r.agent = agents.agent
      ORDER BY r.created_at DESC, r.id DESC LIMIT 1
    ) AS newest WHERE agents.agent IS NOT NULL
    UNION
    SELECT run FROM agentd_checkpoints
    UNION
    (SELECT id FROM agentd_runs ORDER BY created_at DESC, id DESC LIMIT $1)
  )
  SELECT r.record, r.node FROM agentd_runs AS r JOIN held USING (id) ORDER BY r.created_at, r.id`;
