// The Triggers page (GET /triggers): every webhook, after and watch trigger of the agents served,
// with what became of what reached it on this node: counts by outcome, last run, last error.

import { getJson } from "../api-client.js";
import type { TriggerList, TriggerStatus } from "../api-types.js";
import { ErrorBanner, RelativeTime, StatusPill } from "../components.js";
import { useNow, usePolling } from "../hooks.js";
import { routeHref } from "../route.js";

const OUTCOMES = ["accepted", "refused", "duplicate", "rate_limited", "skipped", "failed"] as const;

export function TriggersView() {
  const now = useNow();
  const list = usePolling<TriggerList>(
    "triggers",
    (signal) => getJson<TriggerList>("/triggers", signal),
    5_000,
  );
  const triggers = list.value?.triggers;
  return (
    <div class="view">
      <header class="view-header">
        <h1>Triggers</h1>
        <p class="muted">
          What reached each trigger since this daemon started
          {list.value?.node ? ` (node ${list.value.node}; other nodes count their own)` : ""}.
        </p>
      </header>
      <ErrorBanner message={list.error} />
      {triggers === undefined ? null : triggers.length === 0 ? (
        <p class="empty">No agent has triggers.</p>
      ) : (
        <div class="table-scroll">
          <table class="triggers-table">
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Trigger</th>
                <th scope="col">Last fired</th>
                <th scope="col">Last outcome</th>
                <th scope="col">Counts</th>
                <th scope="col">Last error</th>
              </tr>
            </thead>
            <tbody>
              {triggers.map((trigger) => (
                <TriggerRow key={`${trigger.agent}/${trigger.name}`} trigger={trigger} now={now} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function TriggerRow({ trigger, now }: { trigger: TriggerStatus; now: Date }) {
  const counts = OUTCOMES.filter((outcome) => trigger.counts[outcome] > 0);
  return (
    <tr data-trigger={`${trigger.agent}/${trigger.name}`}>
      <td>
        <a href={routeHref({ view: "agent", agent: trigger.agent })}>{trigger.agent}</a>
      </td>
      <td>
        <strong>{trigger.name}</strong> <span class="muted">{trigger.kind}</span>
        <div class="muted trigger-detail">
          <code>{trigger.detail}</code>
          {trigger.watching === false ? " · watched by another node" : ""}
        </div>
      </td>
      <td>
        <RelativeTime time={trigger.last_fired_at} now={now} />
      </td>
      <td>
        {trigger.last_outcome === null ? (
          <span class="muted">–</span>
        ) : (
          <StatusPill status={trigger.last_outcome} />
        )}
      </td>
      <td class="counts">
        {counts.length === 0
          ? "nothing yet"
          : counts.map((outcome) => `${outcome.replace("_", " ")} ${trigger.counts[outcome]}`).join(" · ")}
      </td>
      <td class="last-error">{trigger.last_error ?? <span class="muted">–</span>}</td>
    </tr>
  );
}
