// The agent's on/off switch (POST /agents/:id/enable|disable): whether its schedule, triggers and
// "Run now" may start runs, who turned it off, and a toggle for tokens of role run.

import { useState } from "preact/hooks";
import { describeError, postJson } from "../api-client.js";
import type { AgentSummary } from "../api-types.js";
import { ErrorBanner } from "../components.js";
import { useAllowed } from "../session.js";

/** "on", "off (by …)" or "off (its file)", as the agents list and the agent page show it. */
export function switchText(agent: AgentSummary): string {
  if (agent.switched_off) return `off — disabled by ${agent.switched_off.by}`;
  return agent.enabled ? "on" : "off — its file says enabled: false";
}

export function AgentSwitch({ agent, onChange }: { agent: AgentSummary; onChange: () => void }) {
  const mayRun = useAllowed("run");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const byFile = !agent.enabled && !agent.switched_off;
  const toggle = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const action = agent.enabled ? "disable" : "enable";
      await postJson(`/agents/${encodeURIComponent(agent.id)}/${action}`);
      onChange();
    } catch (caught) {
      setError(describeError(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="agent-switch" data-enabled={agent.enabled ? "true" : "false"}>
      <button
        type="button"
        role="switch"
        aria-checked={agent.enabled}
        aria-label="Enabled"
        class={`switch ${agent.enabled ? "switch-on" : "switch-off"}`}
        disabled={!mayRun || busy || byFile}
        title={
          byFile
            ? "its file says enabled: false: change the file to turn it on"
            : agent.enabled
              ? "turn off: no scheduled, triggered or manual run starts"
              : "turn back on"
        }
        onClick={() => void toggle()}
      >
        <span class="switch-knob" />
      </button>
      <span class="switch-text">{switchText(agent)}</span>
      <ErrorBanner message={error} />
    </div>
  );
}
