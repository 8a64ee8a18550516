// The dashboard: navigation with the pending-approvals badge, then the view the URL hash names.

import { type ComponentChildren, render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { onUnauthorized } from "./api-client.js";
import { usePendingItems } from "./approvals-count.js";
import { useRoute } from "./hooks.js";
import { routeHref, type Route } from "./route.js";
import { ActivityView } from "./views/activity-view.js";
import { AgentView } from "./views/agent-view.js";
import { AgentsView } from "./views/agents-view.js";
import { ApprovalsView } from "./views/approvals-view.js";
import { FeedView } from "./views/feed-view.js";
import { RunView } from "./views/run-view.js";
import { TriggersView } from "./views/triggers-view.js";
import { DeliveriesView } from "./views/deliveries-view.js";
import { useSession } from "./session.js";

function App() {
  const route = useRoute();
  const [signedOut, setSignedOut] = useState(false);
  useEffect(() => onUnauthorized(() => setSignedOut(true)), []);
  useEffect(() => {
    document.title = `${titleOf(route)} · agentd`;
    // Moves focus to the new view's heading so keyboard and screen reader users land on it.
    const heading = document.querySelector<HTMLElement>("main h1");
    heading?.setAttribute("tabindex", "-1");
    heading?.focus({ preventScroll: true });
  }, [route]);
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <NavigationBar route={route} />
      <main id="main">{signedOut ? <SignIn /> : <CurrentView route={route} />}</main>
    </>
  );
}

function CurrentView({ route }: { route: Route }) {
  switch (route.view) {
    case "agent":
      return <AgentView key={route.agent} agentId={route.agent} />;
    case "run":
      return <RunView key={route.run} runId={route.run} />;
    case "approvals":
      return <ApprovalsView />;
    case "feed":
      return <FeedView />;
    case "activity":
      return <ActivityView />;
    case "triggers":
      return <TriggersView />;
    case "deliveries":
      return <DeliveriesView />;
    default:
      return <AgentsView />;
  }
}

function NavigationBar({ route }: { route: Route }) {
  const pending = usePendingItems();
  const session = useSession();
  const waiting = pending.approvals.length + (pending.questions?.length ?? 0);
  const link = (target: Route, label: string, extra?: ComponentChildren) => {
    const current = target.view === route.view || (target.view === "agents" && route.view === "agent");
    return (
      <li>
        <a href={routeHref(target)} aria-current={current ? "page" : undefined}>
          {label}
          {extra}
        </a>
      </li>
    );
  };
  return (
    <header class="top">
      <a class="brand" href="#/">
        agentd
      </a>
      <nav aria-label="main">
        <ul>
          {link({ view: "agents" }, "Agents")}
          {link(
            { view: "approvals" },
            "Approvals",
            <span class={`badge ${waiting > 0 ? "badge-active" : ""}`} aria-label={`${waiting} waiting`}>
              {waiting}
            </span>,
          )}
          {link({ view: "feed" }, "Live feed")}
          {link({ view: "activity" }, "Cost & activity")}
          {link({ view: "triggers" }, "Triggers")}
          {link({ view: "deliveries" }, "Deliveries")}
        </ul>
      </nav>
      {session?.authenticated ? (
        <span class="session-role" title="the token this browser signed in with, and its role">
          {session.actor.name} · {session.role}
        </span>
      ) : null}
    </header>
  );
}

function SignIn() {
  return (
    <div class="view sign-in">
      <h1 tabIndex={-1}>Sign in to agentd</h1>
      <p>
        This daemon needs its API token. Open the sign-in link <code>agentd start</code> printed when it
        started (it ends in <code>/auth/login?token=…</code>), or enter the token here. The token is kept in
        an HttpOnly cookie and never shown by the page.
      </p>
      <form method="get" action="/auth/login" class="sign-in-form">
        <label for="token">API token</label>
        <input id="token" name="token" type="password" autoComplete="off" required />
        <button type="submit" class="primary">
          Sign in
        </button>
      </form>
    </div>
  );
}

function titleOf(route: Route): string {
  switch (route.view) {
    case "agent":
      return route.agent;
    case "run":
      return route.run;
    case "approvals":
      return "Approvals";
    case "feed":
      return "Live feed";
    case "activity":
      return "Cost & activity";
    case "triggers":
      return "Triggers";
    case "deliveries":
      return "Deliveries";
    default:
      return "Agents";
  }
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
