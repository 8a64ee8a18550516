// The Deliveries page (GET /deliveries/targets, GET /deliveries): every configured delivery target
// with its health — where it goes (credentials left out), its last outcome, failures in a row, the
// last error — then the newest deliveries of every agent (on a cluster, of every node).

import { getJson } from "../api-client.js";
import type { DeliveryTargetList, DeliveryTargetStatus } from "../api-types.js";
import { ErrorBanner, RelativeTime, StatusPill } from "../components.js";
import { useNow, usePolling } from "../hooks.js";
import { routeHref } from "../route.js";
import { DeliveriesPanel } from "./deliveries-panel.js";

export function DeliveriesView() {
  const now = useNow();
  const list = usePolling<DeliveryTargetList>(
    "delivery-targets",
    (signal) => getJson<DeliveryTargetList>("/deliveries/targets", signal),
    5_000,
  );
  const targets = list.value?.targets;
  return (
    <div class="view">
      <header class="view-header">
        <h1>Deliveries</h1>
        <p class="muted">Where runs' outcomes are sent, and how that went lately.</p>
      </header>
      <ErrorBanner message={list.error} />
      {targets === undefined ? null : targets.length === 0 ? (
        <p class="empty">No agent delivers its runs' outcomes anywhere.</p>
      ) : (
        <div class="table-scroll">
          <table class="delivery-targets-table">
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Target</th>
                <th scope="col">When</th>
                <th scope="col">Health</th>
                <th scope="col">Last delivery</th>
                <th scope="col">Last error</th>
              </tr>
            </thead>
            <tbody>
              {targets.map((target) => (
                <TargetRow key={`${target.agent ?? ""}/${target.target}`} target={target} now={now} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <DeliveriesPanel />
    </div>
  );
}

function TargetRow({ target, now }: { target: DeliveryTargetStatus; now: Date }) {
  return (
    <tr data-target={`${target.agent ?? ""}/${target.target}`}>
      <td>
        {target.agent === null ? (
          <span class="muted">no agent</span>
        ) : (
          <a href={routeHref({ view: "agent", agent: target.agent })}>{target.agent}</a>
        )}
      </td>
      <td>
        <code>{target.target}</code> <span class="muted">{target.to}</span>
        <div class="muted target-destination">{target.destination}</div>
      </td>
      <td class="muted">{target.when.join(", ")}</td>
      <td class="health">
        <StatusPill status={target.health} />
        {target.failing_streak > 0 ? (
          <span class="muted streak"> {target.failing_streak} failed in a row</span>
        ) : null}
      </td>
      <td>
        {target.last_status === null ? (
          <span class="muted">–</span>
        ) : (
          <>
            {target.last_status} · <RelativeTime time={target.last_at} now={now} />
          </>
        )}
      </td>
      <td class="last-error">{target.last_error ?? <span class="muted">–</span>}</td>
    </tr>
  );
}
