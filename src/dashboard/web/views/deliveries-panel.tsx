// Deliveries of runs' outcomes on an agent's page and a run's page (GET /deliveries?agent=|run=):
// the target, when it was made, its status, the attempts made, the last error and the next retry.

import { getJsonIfChanged } from "../api-client.js";
import type { Delivery, DeliveryList } from "../api-types.js";
import { ErrorBanner, Panel, RelativeTime, StatusPill } from "../components.js";
import { useNow, usePolling } from "../hooks.js";

/** Deliveries shown at most; the CLI (`agentd deliveries`) and the API page through the rest. */
const SHOWN = 20;

/** The deliveries of one agent or one run, newest first; nothing at all when there are none. */
export function DeliveriesPanel(props: { agent?: string; run?: string }) {
  const query = new URLSearchParams({ limit: String(SHOWN) });
  if (props.agent !== undefined) query.set("agent", props.agent);
  if (props.run !== undefined) query.set("run", props.run);
  const path = `/deliveries?${query.toString()}`;
  const now = useNow();
  let etag: string | undefined;
  const list = usePolling<DeliveryList>(
    path,
    async (signal) => {
      const answer = await getJsonIfChanged<DeliveryList>(path, etag, signal);
      etag = answer?.etag;
      return answer?.body;
    },
    5_000,
  );
  const deliveries = list.value?.deliveries ?? [];
  if (deliveries.length === 0 && list.error === undefined) return null;
  return (
    <Panel title="Deliveries" class="panel-deliveries">
      <ErrorBanner message={list.error} />
      <div class="table-scroll">
        <table class="deliveries-table">
          <thead>
            <tr>
              <th scope="col">Target</th>
              {props.run === undefined ? <th scope="col">Run</th> : null}
              <th scope="col">When</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last error</th>
              <th scope="col">Next retry</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.map((delivery) => (
              <DeliveryRow
                key={delivery.id}
                delivery={delivery}
                now={now}
                showRun={props.run === undefined}
              />
            ))}
          </tbody>
        </table>
      </div>
    </Panel>
  );
}

function DeliveryRow({ delivery, now, showRun }: { delivery: Delivery; now: Date; showRun: boolean }) {
  const lastError = [...delivery.attempts].reverse().find((attempt) => attempt.error !== undefined)?.error;
  return (
    <tr data-delivery={delivery.id} data-target={delivery.target}>
      <td>
        <code>{delivery.target}</code> <span class="muted">{delivery.to}</span>
      </td>
      {showRun ? (
        <td>
          {delivery.run === null ? (
            "–"
          ) : (
            <a href={`#/runs/${encodeURIComponent(delivery.run)}`}>{delivery.run}</a>
          )}
        </td>
      ) : null}
      <td>
        <span class="muted">{delivery.when}</span> · <RelativeTime time={delivery.created_at} now={now} />
      </td>
      <td>
        <StatusPill status={delivery.status} />
      </td>
      <td class="attempts">{delivery.attempts.length}</td>
      <td class="last-error">{lastError ?? <span class="muted">–</span>}</td>
      <td>
        {delivery.next_attempt_at === undefined ? (
          <span class="muted">–</span>
        ) : (
          <RelativeTime time={delivery.next_attempt_at} now={now} />
        )}
      </td>
    </tr>
  );
}
