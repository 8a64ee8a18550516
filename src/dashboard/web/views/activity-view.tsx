// Cost and activity over the last 24 hours: runs by status, tokens and cost, per hour and per agent.

import { useMemo } from "preact/hooks";
import { getJson } from "../api-client.js";
import type { RunRecord, RunStatus } from "../api-types.js";
import { ErrorBanner, Panel, StatusPill } from "../components.js";
import { usePolling } from "../hooks.js";
import { routeHref } from "../route.js";
import { formatCost, formatCount } from "../time-format.js";
import { summarizeActivity } from "../activity.js";

const STATUSES: RunStatus[] = ["running", "waiting", "paused", "queued", "completed", "failed", "stopped"];

/** Pages of GET /runs asked for at most; past them the summary covers the newest runs. */
const MAX_PAGES = 20;
const PAGE_SIZE = 1_000;

/** The runs created since `since`, newest first: GET /runs a page at a time. */
async function runsSince(since: Date, signal: AbortSignal): Promise<{ runs: RunRecord[] }> {
  const runs: RunRecord[] = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    const before = runs.at(-1)?.id;
    const query = `since=${encodeURIComponent(since.toISOString())}&limit=${PAGE_SIZE}${before ? `&before=${encodeURIComponent(before)}` : ""}`;
    const answer = await getJson<{ runs: RunRecord[] }>(`/runs?${query}`, signal);
    runs.push(...answer.runs);
    if (answer.runs.length < PAGE_SIZE) break;
  }
  return { runs };
}

export function ActivityView() {
  const runs = usePolling(
    "activity",
    (signal) => runsSince(new Date(Date.now() - 24 * 3_600_000), signal),
    10_000,
  );
  const summary = useMemo(() => summarizeActivity(runs.value?.runs ?? [], new Date()), [runs.value]);
  const highest = Math.max(1, ...summary.hours.map((hour) => hour.runs));
  return (
    <div class="view">
      <header class="view-header">
        <h1>Cost and activity</h1>
        <p class="muted">Runs created in the last 24 hours.</p>
      </header>
      <ErrorBanner message={runs.error} />
      <div class="stats">
        <div class="stat">
          <span class="stat-value number">{summary.total}</span>
          <span class="stat-label">runs</span>
        </div>
        <div class="stat">
          <span class="stat-value number">{formatCount(summary.tokens)}</span>
          <span class="stat-label">tokens</span>
        </div>
        <div class="stat">
          <span class="stat-value number">{formatCost(summary.cost)}</span>
          <span class="stat-label">cost</span>
        </div>
      </div>
      <Panel title="Runs by status">
        <ul class="status-counts">
          {STATUSES.map((status) => (
            <li key={status}>
              <StatusPill status={status} /> <span class="number">{summary.byStatus[status] ?? 0}</span>
            </li>
          ))}
        </ul>
      </Panel>
      <Panel title="Per hour">
        <div class="hours" role="img" aria-label="runs per hour over the last 24 hours">
          {summary.hours.map((hour) => (
            <div
              key={hour.start.toISOString()}
              class="hour"
              title={`${hour.start.toLocaleString(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit" })}: ${hour.runs} runs, ${hour.failed} failed, ${formatCount(hour.tokens)} tokens, ${formatCost(hour.cost)}`}
            >
              <div class="bar" style={{ height: `${(hour.runs / highest) * 100}%` }}>
                <div
                  class="bar-failed"
                  style={{ height: hour.runs === 0 ? "0" : `${(hour.failed / hour.runs) * 100}%` }}
                />
              </div>
              <span class="hour-label">{hour.start.getHours()}</span>
            </div>
          ))}
        </div>
        <p class="muted legend">
          <span class="swatch swatch-runs" /> runs <span class="swatch swatch-failed" /> failed · hover a bar
          for tokens and cost
        </p>
      </Panel>
      <Panel title="By agent">
        {summary.agents.length === 0 ? <p class="empty">No runs in the last 24 hours.</p> : null}
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col" class="number">
                  Runs
                </th>
                <th scope="col" class="number">
                  Failed
                </th>
                <th scope="col" class="number">
                  Tokens
                </th>
                <th scope="col" class="number">
                  Cost
                </th>
              </tr>
            </thead>
            <tbody>
              {summary.agents.map((agent) => (
                <tr key={agent.agent}>
                  <td>
                    <a href={routeHref({ view: "agent", agent: agent.agent })}>{agent.agent}</a>
                  </td>
                  <td class="number">{agent.runs}</td>
                  <td class="number">{agent.failed}</td>
                  <td class="number">{formatCount(agent.tokens)}</td>
                  <td class="number">{formatCost(agent.cost)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Panel>
    </div>
  );
}
