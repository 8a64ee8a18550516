// The agents list: invalid agents and their errors first, then every agent, one page at a time.

import { useMemo, useRef, useState } from "preact/hooks";
import { getJsonIfChanged } from "../api-client.js";
import type { AgentSummary } from "../api-types.js";
import {
  ErrorBanner,
  ErrorLine,
  Pager,
  Panel,
  RelativeTime,
  StatusPill,
  UnsandboxedBadge,
} from "../components.js";
import { useNow, usePolling } from "../hooks.js";
import { routeHref } from "../route.js";
import { exactTime, formatCost } from "../time-format.js";
import { switchText } from "./agent-switch.js";

const PAGE_SIZE = 100;
/** Hot reload reaches the page within this: a changed agent file shows on the next poll. */
const POLL_MILLISECONDS = 1_000;

export function AgentsView() {
  const etag = useRef<string | undefined>(undefined);
  const agents = usePolling<AgentSummary[]>(
    "agents",
    async (signal) => {
      const answer = await getJsonIfChanged<{ agents: AgentSummary[] }>("/agents", etag.current, signal);
      if (answer === undefined) return undefined;
      etag.current = answer.etag;
      return answer.body.agents;
    },
    POLL_MILLISECONDS,
  );
  const now = useNow();
  const [filter, setFilter] = useState("");
  const [page, setPage] = useState(0);
  const all = agents.value ?? [];
  const invalid = useMemo(() => all.filter((agent) => !agent.valid), [all]);
  const shown = useMemo(() => {
    const words = filter.trim().toLowerCase();
    const matching = words === "" ? all : all.filter((agent) => searchText(agent).includes(words));
    return [...matching].sort((left, right) => left.id.localeCompare(right.id));
  }, [all, filter]);
  const lastPage = Math.max(0, Math.ceil(shown.length / PAGE_SIZE) - 1);
  const currentPage = Math.min(page, lastPage);
  const rows = shown.slice(currentPage * PAGE_SIZE, (currentPage + 1) * PAGE_SIZE);

  return (
    <div class="view">
      <header class="view-header">
        <h1>Agents</h1>
        <p class="muted count">{agents.value === undefined ? "loading…" : `${all.length} agents`}</p>
      </header>
      <ErrorBanner message={agents.error} />
      {invalid.length > 0 ? (
        <Panel title={`Invalid agents (${invalid.length})`} class="panel-invalid">
          <ul class="invalid-list">
            {invalid.map((agent) => (
              <li key={agent.id} data-agent={agent.id}>
                <a href={routeHref({ view: "agent", agent: agent.id })}>{agent.id}</a>
                <ul class="errors">
                  {agent.errors.map((text, index) => (
                    <ErrorLine key={index} text={text} detail={agent.error_details?.[index]} />
                  ))}
                </ul>
              </li>
            ))}
          </ul>
        </Panel>
      ) : null}
      <div class="toolbar">
        <label>
          <span class="visually-hidden">Filter agents</span>
          <input
            type="search"
            placeholder="Filter by id, name, description, worker…"
            value={filter}
            onInput={(event) => {
              setFilter(event.currentTarget.value);
              setPage(0);
            }}
          />
        </label>
      </div>
      <div class="table-scroll">
        <table class="agents-table">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Worker</th>
              <th scope="col">Schedule</th>
              <th scope="col">Enabled</th>
              <th scope="col">Last run</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((agent) => (
              <AgentRow key={agent.id} agent={agent} now={now} />
            ))}
          </tbody>
        </table>
      </div>
      {agents.value !== undefined && shown.length === 0 ? (
        <p class="empty">
          {all.length === 0 ? "No agent files yet: add one to the agents folder." : "No agent matches."}
        </p>
      ) : null}
      <Pager page={currentPage} pageSize={PAGE_SIZE} total={shown.length} onPage={setPage} />
    </div>
  );
}

function AgentRow({ agent, now }: { agent: AgentSummary; now: Date }) {
  const lastRun = agent.last_run;
  const timeZone = agent.schedule?.timezone ?? undefined;
  return (
    <tr data-agent={agent.id} class={agent.valid ? "" : "row-invalid"}>
      <td>
        <a class="agent-id" href={routeHref({ view: "agent", agent: agent.id })}>
          {agent.id}
        </a>
        {agent.name !== agent.id ? <span class="agent-name"> {agent.name}</span> : null}
        {agent.valid ? null : <span class="pill pill-failed">invalid</span>}
        {agent.unsandboxed ? (
          <>
            {" "}
            <UnsandboxedBadge />
          </>
        ) : null}
        <div class="description">{agent.description}</div>
      </td>
      <td data-label="Worker">
        <code>{agent.worker}</code>
      </td>
      <td data-label="Schedule">
        {agent.schedule ? (
          <>
            <code title={timeZone ? `time zone ${timeZone}` : "the daemon's time zone"}>
              {agent.schedule.cron}
            </code>
            <div class="muted">
              {agent.next_fire ? (
                <span
                  title={`${exactTime(new Date(agent.next_fire))}${timeZone ? ` (schedule zone ${timeZone})` : ""}`}
                >
                  next{" "}
                  {new Date(agent.next_fire).toLocaleString(undefined, {
                    dateStyle: "short",
                    timeStyle: "short",
                  })}
                </span>
              ) : (
                "no next fire"
              )}
            </div>
          </>
        ) : (
          <span class="muted">on demand</span>
        )}
      </td>
      <td data-label="Enabled">{agent.enabled ? "yes" : <span class="muted">{switchText(agent)}</span>}</td>
      <td data-label="Last run">
        {lastRun ? (
          <a class="last-run" href={routeHref({ view: "run", run: lastRun.id })}>
            <StatusPill status={lastRun.status} reason={lastRun.reason} />{" "}
            <RelativeTime time={lastRun.ended_at ?? lastRun.started_at ?? lastRun.created_at} now={now} />{" "}
            <span class="cost">{formatCost(lastRun.cost_usd)}</span>
          </a>
        ) : (
          <span class="muted">never</span>
        )}
      </td>
    </tr>
  );
}

function searchText(agent: AgentSummary): string {
  const marks = agent.unsandboxed ? " unsandboxed" : "";
  return `${agent.id} ${agent.name} ${agent.description} ${agent.worker}${marks}`.toLowerCase();
}
