// The page's places, kept in the URL hash so links, reloads and the back button work without any
// server-side routing.

export type Route =
  | { view: "agents" }
  | { view: "agent"; agent: string }
  | { view: "run"; run: string }
  | { view: "approvals" }
  | { view: "feed" }
  | { view: "activity" }
  | { view: "triggers" }
  | { view: "deliveries" };

/** Parses `#/agents/x`, `#/runs/r_1`… ; anything else is the agents list. */
export function parseRoute(hash: string): Route {
  const parts = hash
    .replace(/^#\/?/, "")
    .split("/")
    .filter((part) => part !== "")
    .map((part) => safeDecode(part));
  const [first, second] = parts;
  if (first === "agents" && second !== undefined) return { view: "agent", agent: second };
  if (first === "runs" && second !== undefined) return { view: "run", run: second };
  if (first === "approvals") return { view: "approvals" };
  if (first === "feed") return { view: "feed" };
  if (first === "activity") return { view: "activity" };
  if (first === "triggers") return { view: "triggers" };
  if (first === "deliveries") return { view: "deliveries" };
  return { view: "agents" };
}

/** The hash link of a route. */
export function routeHref(route: Route): string {
  switch (route.view) {
    case "agent":
      return `#/agents/${encodeURIComponent(route.agent)}`;
    case "run":
      return `#/runs/${encodeURIComponent(route.run)}`;
    case "agents":
      return "#/";
    default:
      return `#/${route.view}`;
  }
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
