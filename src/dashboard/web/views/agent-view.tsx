// One agent: "Run now", its resolved definition, its recent runs.

import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { useAllowed } from "../session.js";
import { describeError, getJson, postJson } from "../api-client.js";
import type { AgentDetail, RunRecord, SandboxView } from "../api-types.js";
import {
  ErrorBanner,
  ErrorLine,
  JsonBlock,
  Panel,
  RelativeTime,
  StatusPill,
  UnsandboxedBadge,
} from "../components.js";
import { useNow, usePolling } from "../hooks.js";
import { routeHref } from "../route.js";
import { triggerText } from "../trigger-text.js";
import { MemoryPanel } from "./memory-panel.js";
import { AgentSwitch } from "./agent-switch.js";
import { DeliveriesPanel } from "./deliveries-panel.js";
import { formatCost, formatCount, formatDuration } from "../time-format.js";

/** Fields of the definition shown in their own rows; the rest is listed as it comes. */
const SHOWN_FIELDS = new Set([
  "system_prompt",
  "hash",
  "tools",
  "permissions",
  "limits",
  "model",
  "fallback_models",
]);

export function AgentView({ agentId }: { agentId: string }) {
  const encoded = encodeURIComponent(agentId);
  const agent = usePolling(
    `agent:${agentId}`,
    (signal) => getJson<AgentDetail>(`/agents/${encoded}`, signal),
    3_000,
  );
  const runs = usePolling(
    `agent-runs:${agentId}`,
    (signal) => getJson<{ runs: RunRecord[] }>(`/runs?agent=${encoded}&limit=50`, signal),
    3_000,
  );
  const now = useNow();
  const detail = agent.value;
  return (
    <div class="view">
      <header class="view-header">
        <p class="breadcrumb">
          <a href={routeHref({ view: "agents" })}>Agents</a> /
        </p>
        <h1>
          {detail?.name ?? agentId}
          {detail?.unsandboxed ? (
            <>
              {" "}
              <UnsandboxedBadge />
            </>
          ) : null}
        </h1>
        {detail ? <p class="muted">{detail.description}</p> : null}
        {detail ? <AgentSwitch agent={detail} onChange={agent.refresh} /> : null}
      </header>
      <ErrorBanner message={agent.error} />
      {detail ? (
        <>
          {!detail.valid ? (
            <Panel title="This agent is invalid" class="panel-invalid">
              <ul class="errors">
                {detail.errors.map((text, index) => (
                  <ErrorLine key={index} text={text} detail={detail.error_details?.[index]} />
                ))}
              </ul>
            </Panel>
          ) : null}
          {detail.warnings.length > 0 ? (
            // What the definition ignored or narrowed (agentd validate lists the same).
            <Panel title="Warnings" class="panel-warnings">
              <ul class="plain">
                {detail.warnings.map((text, index) => (
                  <li key={index}>{text}</li>
                ))}
              </ul>
            </Panel>
          ) : null}
          <RunNow agent={detail} />
          <Panel title="Runs">
            <RunsTable
              runs={runs.value?.runs}
              now={now}
              unsandboxedHash={detail.unsandboxed ? detail.definition?.hash : undefined}
            />
          </Panel>
          <DeliveriesPanel agent={agentId} />
          <MemoryPanel agentId={agentId} />
          <Sandbox agent={detail} />
          <Definition agent={detail} />
        </>
      ) : null}
    </div>
  );
}

function RunNow({ agent }: { agent: AgentDetail }) {
  const [task, setTask] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const mayRun = useAllowed("run");
  const start = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const body = task.trim() === "" ? {} : { task: task.trim() };
      const answer = await postJson<{ run: string }>(`/agents/${encodeURIComponent(agent.id)}/runs`, body);
      location.hash = routeHref({ view: "run", run: answer.run });
    } catch (caught) {
      setError(describeError(caught));
      setBusy(false);
    }
  };
  if (!mayRun) return null;
  return (
    <Panel title="Run now">
      <form class="run-now" onSubmit={start}>
        <label for="task">Task</label>
        <textarea
          id="task"
          rows={3}
          value={task}
          placeholder={"Leave empty to run the agent's own task"}
          onInput={(event) => setTask(event.currentTarget.value)}
        />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !agent.valid || !agent.enabled}>
            {busy ? "Starting…" : "Run now"}
          </button>
          {!agent.enabled ? <span class="muted">the agent is off: turn it on above to run it</span> : null}
        </div>
        <ErrorBanner message={error} />
      </form>
    </Panel>
  );
}

/**
 * `unsandboxedHash`: the runs of this definition version are marked "unsandboxed" (the agent's
 * serving version has its sandbox off).
 */
export function RunsTable({
  runs,
  now,
  unsandboxedHash,
}: {
  runs: RunRecord[] | undefined;
  now: Date;
  unsandboxedHash?: string | undefined;
}) {
  if (runs === undefined) return <p class="muted">loading…</p>;
  if (runs.length === 0) return <p class="empty">No runs yet.</p>;
  return (
    <div class="table-scroll">
      <table class="runs-table">
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Status</th>
            <th scope="col">Task</th>
            <th scope="col">Trigger</th>
            <th scope="col">Started</th>
            <th scope="col" class="number">
              Tokens
            </th>
            <th scope="col" class="number">
              Cost
            </th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.id} data-run={run.id}>
              <td class="run-cell">
                <a href={routeHref({ view: "run", run: run.id })}>
                  <code>{run.id}</code>
                </a>
              </td>
              <td data-label="Status">
                <StatusPill status={run.status} reason={run.reason} />
                {unsandboxedHash !== undefined && run.definition_hash === unsandboxedHash ? (
                  <>
                    {" "}
                    <UnsandboxedBadge />
                  </>
                ) : null}
              </td>
              <td class="task-cell" data-label="Task">
                {run.task}
              </td>
              <td class="trigger-cell" data-label="Trigger">
                {triggerText(run.trigger)}
              </td>
              <td data-label="Started">
                <RelativeTime time={run.started_at ?? run.created_at} now={now} />
              </td>
              <td class="number" data-label="Tokens">
                {formatCount(run.usage.total_tokens ?? 0)}
              </td>
              <td class="number" data-label="Cost">
                {formatCost(run.cost_usd)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** What the agent's commands may write, only read, and not see; or that nothing is fenced. */
function Sandbox({ agent }: { agent: AgentDetail }) {
  if (agent.definition === null || agent.sandbox_view === undefined) return null;
  const view = agent.sandbox_view;
  return (
    <Panel title="Sandbox" class="panel-sandbox">
      {view === null ? (
        <p class="banner banner-error">
          No sandbox: its shell commands, CLI worker and hooks run with the daemon's own access and can read
          every secret the daemon can.
        </p>
      ) : (
        <SandboxLists view={view} />
      )}
    </Panel>
  );
}

function SandboxLists({ view }: { view: SandboxView }) {
  const network =
    typeof view.network === "string"
      ? view.network
      : `only through agentd's proxy: ${view.network.join(", ")}`;
  return (
    <dl class="definition sandbox-view">
      <dt>Writable</dt>
      <dd>
        <ul class="plain">
          {view.writable.map((entry) => (
            <li key={entry}>
              <code>{entry}</code>
              {view.private.includes(entry) ? (
                <span class="muted"> private, empty for each command</span>
              ) : null}
            </li>
          ))}
        </ul>
      </dd>
      <dt>Read-only</dt>
      <dd>{listOf(view.read_only)}</dd>
      <dt>Hidden</dt>
      <dd>{listOf(view.hidden)}</dd>
      <dt>Network</dt>
      <dd>
        <code>{network}</code>
      </dd>
    </dl>
  );
}

function Definition({ agent }: { agent: AgentDetail }) {
  const definition = agent.definition;
  if (definition === null) return null;
  const permissions = definition["permissions"] as Record<string, string[]> | undefined;
  const others = Object.entries(definition).filter(([key]) => !SHOWN_FIELDS.has(key));
  return (
    <Panel title="Definition">
      <dl class="definition">
        <dt>File</dt>
        <dd>
          <code>{agent.file}</code>
        </dd>
        <dt>Worker</dt>
        <dd>
          <code>{agent.worker}</code>
        </dd>
        <dt>Model</dt>
        <dd>
          <code>{String(definition["model"] ?? "")}</code>
          {Array.isArray(definition["fallback_models"]) && definition["fallback_models"].length > 0 ? (
            <span class="muted"> then {definition["fallback_models"].join(", ")}</span>
          ) : null}
        </dd>
        <dt>Schedule</dt>
        <dd>
          {agent.schedule ? (
            <code>
              {agent.schedule.cron}
              {agent.schedule.timezone ? ` (${agent.schedule.timezone})` : ""}
            </code>
          ) : (
            "on demand"
          )}
        </dd>
        <dt>Tools</dt>
        <dd>{listOf(definition["tools"])}</dd>
        <dt>Permissions</dt>
        <dd>
          {permissions ? (
            <ul class="plain">
              {(["deny", "ask", "allow"] as const).map((kind) => (
                <li key={kind}>
                  <strong>{kind}</strong>: {listOf(permissions[kind])}
                </li>
              ))}
            </ul>
          ) : (
            "–"
          )}
        </dd>
        <dt>Limits</dt>
        <dd>
          <LimitsList limits={definition["limits"]} />
        </dd>
        {others.map(([key, value]) => (
          <Fragment key={key}>
            <dt>{key.replaceAll("_", " ")}</dt>
            <dd>{typeof value === "string" ? <code>{value}</code> : <JsonBlock value={value} />}</dd>
          </Fragment>
        ))}
        <dt>Definition hash</dt>
        <dd>
          <code class="hash">{definition.hash}</code>
        </dd>
      </dl>
      <details class="prompt" open>
        <summary>System prompt (assembled)</summary>
        <pre>{definition.system_prompt}</pre>
      </details>
    </Panel>
  );
}

/** `timeout: 600000` as "timeout 10 min 00 s", `max_cost_usd: 1` as "$1.00". */
function LimitsList({ limits }: { limits: unknown }) {
  if (typeof limits !== "object" || limits === null) return <span class="muted">none</span>;
  return (
    <ul class="plain limits">
      {Object.entries(limits as Record<string, unknown>).map(([name, value]) => (
        <li key={name}>
          <code>{name}</code>: <span class="number">{limitText(name, value)}</span>
        </li>
      ))}
    </ul>
  );
}

function limitText(name: string, value: unknown): string {
  if (typeof value !== "number") return JSON.stringify(value);
  if (name === "timeout" || name.endsWith("_timeout")) return formatDuration(value);
  if (name.endsWith("_usd")) return formatCost(value);
  return value.toLocaleString();
}

function listOf(value: unknown) {
  if (!Array.isArray(value) || value.length === 0) return <span class="muted">none</span>;
  return value.map((item, index) => (
    <Fragment key={index}>
      {index > 0 ? ", " : ""}
      <code>{String(item)}</code>
    </Fragment>
  ));
}
