// A memory's history under its text: each change, newest first, with when, which run or operator
// made it, and what it changed (GET /agents/:id/memory/history).

import type { MemoryHistory } from "../api-types.js";
import { RelativeTime } from "../components.js";
import { useNow } from "../hooks.js";
import { routeHref } from "../route.js";

type Change = MemoryHistory["changes"][number];

export function MemoryHistoryList({ history }: { history: MemoryHistory | undefined }) {
  const now = useNow();
  if (history === undefined) return null;
  return (
    <details class="memory-history-panel" open={history.changes.length > 0 && history.changes.length <= 5}>
      <summary>
        History ({history.changes.length}
        {history.complete ? "" : "+"} changes)
      </summary>
      {history.changes.length === 0 ? (
        <p class="empty">No change recorded yet.</p>
      ) : (
        <ol class="memory-history">
          {history.changes.map((change) => (
            <li key={`${change.agent}:${change.id}`} data-operation={change.operation}>
              <RelativeTime time={change.time} now={now} /> · <Who change={change} /> ·{" "}
              <strong>{change.operation}</strong> · {change.chars} characters after
              <ChangeText change={change} />
            </li>
          ))}
        </ol>
      )}
    </details>
  );
}

function Who({ change }: { change: Change }) {
  if (change.run !== null) {
    return (
      <span class="change-by">
        run{" "}
        <a href={routeHref({ view: "run", run: change.run })}>
          <code>{change.run}</code>
        </a>
      </span>
    );
  }
  const actor = change.actor ? `${change.actor.kind} ${change.actor.name}` : "an operator";
  return <span class="change-by">operator ({actor})</span>;
}

function ChangeText({ change }: { change: Change }) {
  if (change.operation === "set") {
    return (
      <div class="change-text">
        {(change.removed ?? []).map((line, index) => (
          <div key={`r${index}`} class="change-removed">
            − {line}
          </div>
        ))}
        {(change.added ?? []).map((line, index) => (
          <div key={`a${index}`} class="change-added">
            + {line}
          </div>
        ))}
      </div>
    );
  }
  if (change.operation === "replace") {
    return (
      <div class="change-text">
        <div class="change-removed">− {change.old}</div>
        <div class="change-added">+ {change.new}</div>
      </div>
    );
  }
  return (
    <div class="change-text">
      <div class={change.operation === "add" ? "change-added" : "change-removed"}>
        {change.operation === "add" ? "+ " : "− "}
        {change.text}
      </div>
    </div>
  );
}
