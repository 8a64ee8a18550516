// Run again: a new run of the same agent with the same task, opened once it is created.

import { useState } from "preact/hooks";
import { describeError, postJson } from "../api-client.js";
import { ErrorBanner } from "../components.js";
import { routeHref } from "../route.js";

export function RerunButton({ agent, task }: { agent: string; task: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const rerun = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const answer = await postJson<{ run: string }>(`/agents/${encodeURIComponent(agent)}/runs`, { task });
      location.hash = routeHref({ view: "run", run: answer.run });
    } catch (caught) {
      setError(describeError(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" disabled={busy} onClick={() => void rerun()} title="a new run with the same task">
        Run again
      </button>
      <ErrorBanner message={error} />
    </>
  );
}
