// One run: its header (status, usage, cost, duration, definition hash, controls) and its live
// timeline. The run's log is read a page at a time, the next page on request, so a run of a
// million events is never read whole; of what is read, only the newest rows are rendered, earlier
// ones on request.

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { describeError, getJson, postJson } from "../api-client.js";
import { FINISHED_STATUSES, type AgentEvent, type RunRecord } from "../api-types.js";
import { ErrorBanner, JsonBlock, RelativeTime, StatusPill, UnsandboxedBadge } from "../components.js";
import { useNow, usePolling } from "../hooks.js";
import { routeHref } from "../route.js";
import { type FollowedRun, followRun, type HistoryState, type StreamState } from "../run-stream.js";
import { type ApprovalState, Timeline, type TimelineRow } from "../timeline.js";
import { exactTime, formatCost, formatCount, formatDuration } from "../time-format.js";
import { ApprovalButtons } from "./approval-buttons.js";
import { useAllowed } from "../session.js";
import { ApprovalCall } from "./approval-call.js";
import { MarkdownText } from "../markdown-view.js";
import { RerunButton } from "./rerun-button.js";
import { DeliveriesPanel } from "./deliveries-panel.js";
import { triggerText } from "../trigger-text.js";

const PAGE_ROWS = 200;

export function RunView({ runId }: { runId: string }) {
  const record = usePolling(
    `run:${runId}`,
    (signal) => getJson<RunRecord>(`/runs/${encodeURIComponent(runId)}`, signal),
    2_000,
  );
  const run = record.value;
  const finished = run !== undefined && FINISHED_STATUSES.has(run.status);
  const timeline = useMemo(() => new Timeline(runId), [runId]);
  const [version, setVersion] = useState(0);
  const [streamState, setStreamState] = useState<StreamState>("connecting");
  const [streamError, setStreamError] = useState<string | undefined>(undefined);
  const [visibleRows, setVisibleRows] = useState(PAGE_ROWS);
  const [history, setHistory] = useState<HistoryState>({ through: 0, more: false, loading: true });
  const followed = useRef<FollowedRun | undefined>(undefined);
  const now = useNow(1_000);

  // Follow live while the run is in flight; a finished run only reads its log.
  useEffect(() => {
    if (run === undefined) return undefined;
    const current = followRun({
      agent: run.agent,
      run: runId,
      live: !finished,
      lastId: () => timeline.lastId,
      onEvents: (events) => {
        if (timeline.add(events)) setVersion((count) => count + 1);
        if (events.some(endsRun)) record.refresh();
      },
      onState: setStreamState,
      onError: (error) => setStreamError(describeError(error)),
      onHistory: setHistory,
    });
    followed.current = current;
    return () => current.stop();
    // Reconnects only when the run's agent is known or the run finishes.
  }, [run?.agent, runId, finished]);

  const follow = useFollowBottom(version);
  const rows = timeline.rows;
  // Every run of an agent without its sandbox starts with this warning.
  const unsandboxed = useMemo(() => rows.some(isUnsandboxedWarning), [version, rows]);
  const hidden = Math.max(0, rows.length - visibleRows);
  const shown = rows.slice(hidden);
  // Rows the log's pages brought, then the gap the next page fills, then what came live.
  const paged = history.more ? shown.filter((row) => firstIdOf(row) <= history.through) : shown;
  const live = history.more ? shown.slice(paged.length) : [];
  return (
    <div class="view">
      <header class="view-header">
        <p class="breadcrumb">
          <a href={routeHref({ view: "agents" })}>Agents</a> /{" "}
          {run ? <a href={routeHref({ view: "agent", agent: run.agent })}>{run.agent}</a> : "…"} /
        </p>
        <h1>
          Run <code>{runId}</code>
          {unsandboxed ? (
            <>
              {" "}
              <UnsandboxedBadge />
            </>
          ) : null}
        </h1>
      </header>
      <ErrorBanner message={record.error} />
      {run ? <RunHeader run={run} now={now} onChange={record.refresh} /> : null}
      <DeliveriesPanel run={runId} />
      <section class="panel timeline-panel" aria-labelledby="timeline-title">
        <div class="timeline-head">
          <h2 id="timeline-title">Timeline</h2>
          <span class={`stream-state stream-${streamState}`} role="status">
            {streamLabel(streamState, finished)}
          </span>
          <label class="follow">
            <input
              type="checkbox"
              checked={follow.enabled}
              onChange={(event) => follow.set(event.currentTarget.checked)}
            />{" "}
            follow
          </label>
        </div>
        <ErrorBanner message={streamError} />
        {hidden > 0 ? (
          <button
            type="button"
            class="show-earlier"
            onClick={() => setVisibleRows((count) => count + PAGE_ROWS)}
          >
            Show {Math.min(PAGE_ROWS, hidden)} earlier ({hidden} hidden)
          </button>
        ) : null}
        <ol class="timeline">
          {paged.map((row) => (
            <Row key={row.key} row={row} run={run} now={now} />
          ))}
        </ol>
        {history.more ? (
          <button
            type="button"
            class="load-more"
            disabled={history.loading}
            onClick={() => followed.current?.loadMore()}
          >
            {history.loading ? "Loading…" : `Load more events (after #${history.through})`}
          </button>
        ) : null}
        {live.length > 0 ? (
          <ol class="timeline">
            {live.map((row) => (
              <Row key={row.key} row={row} run={run} now={now} />
            ))}
          </ol>
        ) : null}
        {rows.length === 0 ? <p class="empty">No events yet.</p> : null}
      </section>
    </div>
  );
}

/** The id of a row's first event: where it sits in the run's log. */
function firstIdOf(row: TimelineRow): number {
  if (row.kind === "event") return row.event.id;
  if (row.kind === "call") return row.action.id;
  return row.requested.id;
}

function RunHeader({ run, now, onChange }: { run: RunRecord; now: Date; onChange: () => void }) {
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const control = async (action: "pause" | "resume" | "stop") => {
    setBusy(true);
    setError(undefined);
    try {
      await postJson(`/runs/${encodeURIComponent(run.id)}/${action}`);
      onChange();
    } catch (caught) {
      setError(describeError(caught));
    } finally {
      setBusy(false);
    }
  };
  const finished = FINISHED_STATUSES.has(run.status);
  const mayControl = useAllowed("run");
  const started = run.started_at ? new Date(run.started_at).getTime() : undefined;
  const ended = run.ended_at ? new Date(run.ended_at).getTime() : now.getTime();
  return (
    <section class="panel run-header" aria-label="run summary">
      <div class="run-status-line">
        <StatusPill status={run.status} reason={run.reason} />
        <div class="controls" hidden={!mayControl}>
          {run.status === "running" || run.status === "waiting" || run.status === "queued" ? (
            <button type="button" disabled={busy} onClick={() => void control("pause")}>
              Pause
            </button>
          ) : null}
          {run.status === "paused" ? (
            <button type="button" disabled={busy} onClick={() => void control("resume")}>
              Resume
            </button>
          ) : null}
          {!finished ? (
            <button type="button" class="danger" disabled={busy} onClick={() => void control("stop")}>
              Stop
            </button>
          ) : null}
          {finished ? <RerunButton agent={run.agent} task={run.task} /> : null}
        </div>
      </div>
      <ErrorBanner message={error} />
      <p class="task">{run.task}</p>
      <dl class="facts">
        <div>
          <dt>Agent</dt>
          <dd>
            <a href={routeHref({ view: "agent", agent: run.agent })}>{run.agent}</a>
          </dd>
        </div>
        {run.parent_run ? (
          <div>
            <dt>Parent run</dt>
            <dd>
              <a href={routeHref({ view: "run", run: run.parent_run })}>{run.parent_run}</a>
            </dd>
          </div>
        ) : null}
        <div>
          <dt>Worker</dt>
          <dd>{run.worker ?? "–"}</dd>
        </div>
        <div>
          <dt>Trigger</dt>
          <dd class="run-trigger">{triggerText(run.trigger)}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <RelativeTime time={run.created_at} now={now} />
          </dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd class="number">{started === undefined ? "–" : formatDuration(ended - started)}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd
            class="number"
            title={`${run.usage.prompt_tokens ?? 0} prompt + ${run.usage.completion_tokens ?? 0} completion`}
          >
            {formatCount(run.usage.total_tokens ?? 0)}
          </dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd class="number">{formatCost(run.cost_usd)}</dd>
        </div>
        {run.trace_url ? (
          <div>
            <dt>Trace</dt>
            <dd>
              <a href={run.trace_url} target="_blank" rel="noreferrer">
                {run.trace_id?.slice(0, 12) ?? "trace"}
              </a>
            </dd>
          </div>
        ) : null}
        <div>
          <dt>Definition</dt>
          <dd>
            <code class="hash" title={run.definition_hash}>
              {run.definition_hash.slice(0, 12)}
            </code>
          </dd>
        </div>
      </dl>
      {run.error ? (
        <p class="banner banner-error">
          {run.error.code}: {run.error.message}
        </p>
      ) : null}
    </section>
  );
}

function Row({ row, run, now }: { row: TimelineRow; run: RunRecord | undefined; now: Date }) {
  if (row.kind === "call") {
    return (
      <CallRow
        action={row.action}
        observation={row.observation}
        approval={row.approval}
        run={run}
        now={now}
      />
    );
  }
  if (row.kind === "approval")
    return <ApprovalRow requested={row.requested} answer={row.answer} run={run} now={now} />;
  return <EventRow event={row.event} />;
}

function CallRow(props: {
  action: AgentEvent;
  observation: AgentEvent | undefined;
  approval: ApprovalState | undefined;
  run: RunRecord | undefined;
  now: Date;
}) {
  const { action, observation, approval, run, now } = props;
  const tool = String(action.data["tool"] ?? "tool");
  const ok = observation?.data["ok"];
  const state = observation === undefined ? "running" : ok === true ? "ok" : "failed";
  const duration = observation?.data["duration_ms"];
  return (
    <li class={`row row-call call-${state}`} data-type="action" data-event={action.id}>
      {approval ? <ApprovalLine approval={approval} run={run} now={now} /> : null}
      <details>
        <summary>
          <span class="row-type">tool</span> <code class="tool">{tool}</code>{" "}
          <span
            class={`pill pill-${state === "ok" ? "completed" : state === "failed" ? "failed" : "running"}`}
          >
            {state}
          </span>{" "}
          <span class="muted number">{typeof duration === "number" ? formatDuration(duration) : ""}</span>
          <EventTime event={action} />
        </summary>
        <div class="call-body">
          <h3>Arguments</h3>
          <JsonBlock value={action.data["arguments"]} />
          {observation ? (
            <>
              <h3>Observation{observation.data["truncated"] === true ? " (truncated)" : ""}</h3>
              <pre class="output">{String(observation.data["output"] ?? "")}</pre>
            </>
          ) : null}
        </div>
      </details>
    </li>
  );
}

/** An approval without its call (a call published before this page's history began). */
function ApprovalRow(props: {
  requested: AgentEvent;
  answer: AgentEvent | undefined;
  run: RunRecord | undefined;
  now: Date;
}) {
  const { requested, answer, run, now } = props;
  const open = answer === undefined && run !== undefined && !FINISHED_STATUSES.has(run.status);
  return (
    <li class="row row-approval" data-type="approval">
      <ApprovalLine approval={{ requested, answer }} run={run} now={now} />
      {open ? null : <JsonBlock value={requested.data["arguments"]} />}
    </li>
  );
}

/** The state of an approval, its countdown and, while it waits, the buttons that answer it. */
function ApprovalLine({
  approval,
  run,
  now,
}: {
  approval: ApprovalState;
  run: RunRecord | undefined;
  now: Date;
}) {
  const { requested, answer } = approval;
  const id = String(requested.data["id"] ?? "");
  const expiresAt =
    typeof requested.data["expires_at"] === "string" ? requested.data["expires_at"] : undefined;
  const open = answer === undefined && run !== undefined && !FINISHED_STATUSES.has(run.status);
  return (
    <div class="approval-line" data-approval={id}>
      <div class="row-line">
        <span class="row-type">approval</span>
        {answer ? (
          <StatusPill status={String(answer.data["state"])} reason={answerDetail(answer)} />
        ) : (
          <span class="pill pill-waiting">approval requested</span>
        )}
        {open && expiresAt ? <Countdown until={expiresAt} now={now} /> : null}
      </div>
      {open ? (
        <ApprovalCall
          tool={String(requested.data["tool"] ?? "tool")}
          arguments={requested.data["arguments"]}
          reason={typeof requested.data["reason"] === "string" ? requested.data["reason"] : undefined}
        />
      ) : null}
      {open ? <ApprovalButtons approvalId={id} /> : null}
    </div>
  );
}

function EventRow({ event }: { event: AgentEvent }) {
  const data = event.data;
  let body;
  switch (event.type) {
    case "thought":
      body = <p class="thought">{String(data["text"] ?? "")}</p>;
      break;
    case "status":
      body = (
        <span>
          <StatusPill status={String(data["status"])} reason={data["reason"] as string | undefined} />
          {data["message"] ? <span class="muted"> {String(data["message"])}</span> : null}
        </span>
      );
      break;
    case "result":
      body = (
        <div>
          <MarkdownText class="result" text={String(data["text"] ?? "")} />
          <span class="muted">
            {formatCount(Number((data["usage"] as { total_tokens?: number } | undefined)?.total_tokens ?? 0))}{" "}
            tokens · {formatCost(Number(data["cost_usd"] ?? 0))} · {String(data["worker"] ?? "")}
          </span>
        </div>
      );
      break;
    case "error":
    case "warning":
      body = (
        <span>
          <code>{String(data["code"] ?? "")}</code> {String(data["message"] ?? "")}
        </span>
      );
      break;
    case "question":
      body = (
        <span>
          {String(data["question"] ?? "")}
          {typeof data["answer"] === "string" ? <strong> → {data["answer"]}</strong> : null}
          {data["state"] ? <span class="muted"> ({String(data["state"])})</span> : null}
        </span>
      );
      break;
    case "fallback":
      body = (
        <span>
          {String(data["from"])} → {String(data["to"])} ({String(data["reason"])}):{" "}
          {String(data["message"] ?? "")}
        </span>
      );
      break;
    case "compaction":
      body = (
        <span>
          {String(data["method"])}: {String(data["messages_before"])} → {String(data["messages_after"])}{" "}
          messages, {formatCount(Number(data["tokens_before"] ?? 0))} →{" "}
          {formatCount(Number(data["tokens_after"] ?? 0))} tokens
        </span>
      );
      break;
    case "memory":
      body = (
        <span>
          {String(data["operation"])} by {String(data["by"])}
          {typeof data["text"] === "string" ? <q>{data["text"]}</q> : null}
          {typeof data["old"] === "string" ? (
            <>
              <q>{data["old"]}</q> → <q>{String(data["new"] ?? "")}</q>
            </>
          ) : null}
          <span class="muted"> ({String(data["chars"])} characters)</span>
        </span>
      );
      break;
    default:
      body = <JsonBlock value={data} />;
  }
  return (
    <li class={`row row-${event.type}`} data-type={event.type} data-event={event.id}>
      <div class="row-line">
        <span class="row-type">{event.type}</span> {body}
        <EventTime event={event} />
      </div>
    </li>
  );
}

function EventTime({ event }: { event: AgentEvent }) {
  const date = new Date(event.time);
  return (
    <time class="event-time" dateTime={event.time} title={exactTime(date)}>
      {date.toLocaleTimeString(undefined, { hour12: false })}
    </time>
  );
}

/** Time left before an approval expires, ticking each second. */
export function Countdown({ until, now }: { until: string; now: Date }) {
  const left = new Date(until).getTime() - now.getTime();
  return (
    <span class="countdown number" title={`expires ${exactTime(new Date(until))}`}>
      {left > 0 ? `expires in ${formatDuration(Math.floor(left / 1_000) * 1_000)}` : "expiring"}
    </span>
  );
}

function answerDetail(answer: AgentEvent): string | undefined {
  const parts = [
    answer.data["scope"] === "run" ? "for this run" : undefined,
    answer.data["by"] ? `by ${String(answer.data["by"])}` : undefined,
  ];
  const text = parts.filter(Boolean).join(" ");
  return text === "" ? undefined : text;
}

function endsRun(event: AgentEvent): boolean {
  return event.type === "result" || event.type === "status";
}

function streamLabel(state: StreamState, finished: boolean): string {
  if (finished) return "finished";
  if (state === "live") return "● live";
  if (state === "reconnecting") return "reconnecting…";
  return state === "connecting" ? "connecting…" : "closed";
}

/** Keeps the page scrolled to the bottom as rows arrive, while the user has not scrolled up. */
function useFollowBottom(version: number): { enabled: boolean; set: (enabled: boolean) => void } {
  const [enabled, setEnabled] = useState(true);
  const atBottom = useRef(true);
  useEffect(() => {
    const update = () => {
      atBottom.current = innerHeight + scrollY >= document.documentElement.scrollHeight - 80;
    };
    addEventListener("scroll", update, { passive: true });
    return () => removeEventListener("scroll", update);
  }, []);
  useLayoutEffect(() => {
    if (enabled && atBottom.current && version > 0) scrollTo({ top: document.documentElement.scrollHeight });
  }, [version, enabled]);
  return { enabled, set: setEnabled };
}

function isUnsandboxedWarning(row: TimelineRow): boolean {
  return row.kind === "event" && row.event.type === "warning" && row.event.data["code"] === "UNSANDBOXED";
}
