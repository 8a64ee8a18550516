// An agent's memory on its page: the whole text, its version and size, and an editor that saves by
// compare-and-set on the version it loaded (GET/PUT /agents/:id/memory).

import { useEffect, useState } from "preact/hooks";
import { ApiError, describeError, getJson, putJson } from "../api-client.js";
import type { MemoryHistory } from "../api-types.js";
import { ErrorBanner, Panel } from "../components.js";
import { useAllowed } from "../session.js";
import { MemoryHistoryList } from "./memory-history.js";

/** `GET /agents/:id/memory` (the API's MemorySchema). */
interface AgentMemory {
  memory: string;
  content: string;
  version: string;
  chars: number;
  agents: Array<{ id: string; mode: "none" | "read" | "write" }>;
}

export function MemoryPanel({ agentId }: { agentId: string }) {
  const path = `/agents/${encodeURIComponent(agentId)}/memory`;
  const [memory, setMemory] = useState<AgentMemory | undefined>(undefined);
  const [history, setHistory] = useState<MemoryHistory | undefined>(undefined);
  /** After a 409: the text saved meanwhile, shown under the editor. */
  const [latest, setLatest] = useState<string | undefined>(undefined);
  const [draft, setDraft] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  // Replacing a memory is admin's (it is in every later prompt of its agents): not offered below.
  const mayEdit = useAllowed("admin");
  const load = async () => {
    setError(undefined);
    try {
      setMemory(await getJson<AgentMemory>(path));
      setDraft(undefined);
      setLatest(undefined);
      setHistory(await getJson<MemoryHistory>(`${path}/history`));
    } catch (caught) {
      setError(describeError(caught));
    }
  };
  useEffect(() => {
    void load();
  }, [path]);
  if (memory === undefined) return error ? <ErrorBanner message={error} /> : null;
  const mode = memory.agents.find((agent) => agent.id === agentId)?.mode ?? "none";
  if (mode === "none" && memory.content === "") return null;
  const save = async () => {
    if (draft === undefined) return;
    setBusy(true);
    setError(undefined);
    try {
      setMemory(await putJson<AgentMemory>(path, { content: draft, version: memory.version }));
      setDraft(undefined);
      setHistory(await getJson<MemoryHistory>(`${path}/history`));
      setLatest(undefined);
    } catch (caught) {
      if (!(caught instanceof ApiError && caught.status === 409)) {
        setError(describeError(caught));
        return;
      }
      // The edit stays in the editor; the text it would have overwritten is shown beside it.
      const current = await getJson<AgentMemory>(path).catch(() => undefined);
      if (current !== undefined) {
        setMemory(current);
        setLatest(current.content);
        setHistory(await getJson<MemoryHistory>(`${path}/history`).catch(() => history));
      }
      setError(
        `Not saved: the memory changed since you opened the editor (version ${memory.version} is now ${current?.version ?? "newer"}: a run or another operator wrote it). Your edit is still in the editor and the text saved meanwhile is shown under it: merge what you need, then Save again.`,
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <Panel title="Memory" class="panel-memory">
      <p class="muted">
        <code>{memory.memory}</code> · {mode} · {memory.chars} characters · version{" "}
        <code>{memory.version}</code>
        {memory.agents.length > 1
          ? ` · shared with ${memory.agents.map((agent) => agent.id).join(", ")}`
          : ""}
      </p>
      {draft === undefined ? (
        memory.content === "" ? (
          <p class="empty">The memory is empty.</p>
        ) : (
          <pre class="memory-content">{memory.content}</pre>
        )
      ) : (
        <textarea
          aria-label="Memory"
          rows={12}
          value={draft}
          onInput={(event) => setDraft(event.currentTarget.value)}
        />
      )}
      <div class="actions">
        {draft === undefined ? (
          mayEdit ? (
            <button type="button" onClick={() => setDraft(memory.content)}>
              Edit
            </button>
          ) : null
        ) : (
          <>
            <button type="button" class="primary" disabled={busy} onClick={() => void save()}>
              {busy ? "Saving…" : "Save"}
            </button>
            <button
              type="button"
              disabled={busy}
              onClick={() => {
                setDraft(undefined);
                setLatest(undefined);
                setError(undefined);
              }}
            >
              Cancel
            </button>
          </>
        )}
        <button type="button" disabled={busy} onClick={() => void load()}>
          Reload
        </button>
      </div>
      <ErrorBanner message={error} />
      {draft !== undefined && latest !== undefined ? (
        <div class="memory-latest">
          <p class="muted">Saved meanwhile (version {memory.version}):</p>
          <pre class="memory-content">{latest}</pre>
        </div>
      ) : null}
      <MemoryHistoryList history={history} />
    </Panel>
  );
}
