// Every agent's events as they happen (the merged cursor of GET /events, long-polled), filtered
// by agent and type. New events join at the bottom, so nothing on screen moves.

import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { describeError, getJson } from "../api-client.js";
import type { AgentEvent, MergedPage } from "../api-types.js";
import { ErrorBanner } from "../components.js";
import { routeHref } from "../route.js";
import { exactTime } from "../time-format.js";

/** Events kept in the page; older ones are dropped (the API still has them). */
const KEPT_EVENTS = 2_000;
const SHOWN_EVENTS = 300;
const WAIT_SECONDS = 25;

export function FeedView() {
  const [events, setEvents] = useState<AgentEvent[]>([]);
  const [error, setError] = useState<string | undefined>(undefined);
  const [agent, setAgent] = useState("");
  const [type, setType] = useState("");
  const [missed, setMissed] = useState(0);
  const cursor = useRef<string | undefined>(undefined);

  useEffect(() => {
    const controller = new AbortController();
    const poll = async () => {
      while (!controller.signal.aborted) {
        try {
          const after = cursor.current === undefined ? "" : `&after=${encodeURIComponent(cursor.current)}`;
          const page = await getJson<MergedPage>(
            `/events?limit=500&wait=${WAIT_SECONDS}${after}`,
            controller.signal,
          );
          cursor.current = page.next;
          setError(undefined);
          if (page.missed > 0) setMissed((count) => count + page.missed);
          if (page.events.length > 0) setEvents((kept) => [...kept, ...page.events].slice(-KEPT_EVENTS));
        } catch (caught) {
          if (controller.signal.aborted) return;
          setError(describeError(caught));
          await new Promise((resolve) => setTimeout(resolve, 2_000));
        }
      }
    };
    void poll();
    return () => controller.abort();
  }, []);

  const agents = useMemo(() => [...new Set(events.map((event) => event.agent))].sort(), [events]);
  const types = useMemo(() => [...new Set(events.map((event) => event.type))].sort(), [events]);
  const shown = useMemo(
    () =>
      events
        .filter((event) => (agent === "" || event.agent === agent) && (type === "" || event.type === type))
        .slice(-SHOWN_EVENTS),
    [events, agent, type],
  );
  return (
    <div class="view">
      <header class="view-header">
        <h1>Live feed</h1>
        <p class="muted">Events of every agent, oldest at the top, newest arriving at the bottom.</p>
      </header>
      <ErrorBanner message={error} />
      <div class="toolbar">
        <label>
          Agent{" "}
          <select value={agent} onChange={(event) => setAgent(event.currentTarget.value)}>
            <option value="">all</option>
            {agents.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Type{" "}
          <select value={type} onChange={(event) => setType(event.currentTarget.value)}>
            <option value="">all</option>
            {types.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        {missed > 0 ? (
          <span class="muted">{missed} events were dropped before they could be read</span>
        ) : null}
      </div>
      {shown.length === 0 ? <p class="empty">No events yet: they appear here as agents work.</p> : null}
      <ol class="feed">
        {shown.map((event) => (
          <li key={`${event.agent}:${event.id}`} class={`feed-row row-${event.type}`} data-type={event.type}>
            <time dateTime={event.time} title={exactTime(new Date(event.time))}>
              {new Date(event.time).toLocaleTimeString(undefined, { hour12: false })}
            </time>
            <a href={routeHref({ view: "agent", agent: event.agent })}>{event.agent}</a>
            <span class="row-type">{event.type}</span>
            <span class="feed-summary">
              {event.run ? (
                <a href={routeHref({ view: "run", run: event.run })}>
                  <code>{event.run}</code>
                </a>
              ) : null}{" "}
              {summarize(event)}
            </span>
          </li>
        ))}
      </ol>
    </div>
  );
}

/** One line saying what an event is about. */
export function summarize(event: AgentEvent): string {
  const data = event.data;
  const text = (key: string) => (typeof data[key] === "string" ? (data[key] as string) : "");
  switch (event.type) {
    case "status":
      return [text("status"), text("reason")].filter(Boolean).join(" · ");
    case "thought":
      return text("text").slice(0, 200);
    case "action":
      return `${text("tool")} ${JSON.stringify(data["arguments"] ?? {}).slice(0, 160)}`;
    case "observation":
      return `${text("tool")} ${data["ok"] === true ? "ok" : "failed"}: ${text("output").slice(0, 160)}`;
    case "approval":
      return `${text("tool")} ${text("state")}`;
    case "result":
      return text("text").slice(0, 200);
    case "error":
    case "warning":
      return `${text("code")} ${text("message")}`;
    default:
      return JSON.stringify(data).slice(0, 200);
  }
}
