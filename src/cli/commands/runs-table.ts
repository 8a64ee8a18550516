import type { RunRecord } from "../../run-vocabulary/run-record.js";

const HEADER = ["RUN", "AGENT", "STATUS", "CREATED", "COST", "TRIGGER"] as const;
/** Columns whose values are right-aligned (numbers). */
const RIGHT_ALIGNED = new Set<number>([4]);

/**
 * `agentd runs` as a table: a header, then one line per run, each column as wide as its widest
 * value, two spaces apart, the cost right-aligned. No trailing spaces.
 *
 * ```text
 * RUN                        AGENT   STATUS              CREATED               COST     TRIGGER
 * r_0mx1n7cvg000036mn771y    writer  completed           2026-11-29T09:34:27Z  $0.0123  schedule
 * r_0mx1n7cvg000037aa01b2    writer  failed (timeout)    2026-11-29T09:40:02Z  $0.0000  webhook:github-pr
 * ```
 */
export function formatRunsTable(runs: readonly RunRecord[]): string[] {
  const rows = [[...HEADER], ...runs.map(runCells)];
  const widths = HEADER.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)));
  return rows.map((row) =>
    row
      .map((cell, column) => {
        const width = widths[column] ?? 0;
        return RIGHT_ALIGNED.has(column) ? cell.padStart(width) : cell.padEnd(width);
      })
      .join("  ")
      .trimEnd(),
  );
}

function runCells(run: RunRecord): string[] {
  const status = run.reason ? `${run.status} (${run.reason})` : run.status;
  // To the second: the milliseconds only widen the column.
  const created = run.created_at.replace(/\.\d+Z$/, "Z");
  // What started it: `schedule`, `api`, `webhook:github-pr`, `after:<name>`…
  const { trigger } = run;
  const name = "name" in trigger && trigger.name !== undefined ? `:${trigger.name}` : "";
  return [run.id, run.agent, status, created, `$${run.cost_usd.toFixed(4)}`, `${trigger.kind}${name}`];
}
