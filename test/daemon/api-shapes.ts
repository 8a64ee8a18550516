import type { AgentEvent } from "../../src/events/agent-event.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { waitFor } from "../support/wait-for.js";

/** The calls black-box tests make, typed the way SPEC 6 promises them. */
export async function startRun(daemon: DaemonProcess, agent: string, task: string): Promise<string> {
  const reply = await daemon.request("POST", `/agents/${agent}/runs`, { task });
  if (reply.status !== 202) throw new Error(`POST /agents/${agent}/runs answered ${reply.status}`);
  return (reply.body as { run: string }).run;
}

export async function listRuns(daemon: DaemonProcess, query = ""): Promise<RunRecord[]> {
  const reply = await daemon.request("GET", `/runs${query}`);
  return (reply.body as { runs: RunRecord[] }).runs;
}

export async function getRun(daemon: DaemonProcess, run: string): Promise<RunRecord> {
  return (await daemon.request("GET", `/runs/${run}`)).body as RunRecord;
}

/** Polls GET /runs/:run until the run has ended (whatever its status), and returns its record. */
export function waitForRunEnd(
  daemon: DaemonProcess,
  run: string,
  timeoutMilliseconds?: number,
): Promise<RunRecord> {
  return waitFor(
    async () => {
      const record = await getRun(daemon, run);
      return record.ended_at ? record : undefined;
    },
    `run ${run} to end`,
    timeoutMilliseconds,
  );
}

export async function agentEvents(daemon: DaemonProcess, agent: string, after = 0): Promise<AgentEvent[]> {
  const reply = await daemon.request("GET", `/agents/${agent}/events?after=${after}&limit=1000`);
  return (reply.body as { events: AgentEvent[] }).events;
}

/** A run's whole log, read page by page as a client does. */
export async function runEvents(daemon: DaemonProcess, run: string): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for (let after = 0; ;) {
    const reply = await daemon.request("GET", `/runs/${run}/events?after=${after}&limit=10000`);
    const page = reply.body as { events: AgentEvent[]; next: number };
    events.push(...page.events);
    if (page.events.length < 10_000) return events;
    after = page.next;
  }
}

/** POST /agents/:id/runs with an Idempotency-Key, as a client sends it. */
export async function postRunWithKey(
  daemon: DaemonProcess,
  agent: string,
  key: string | undefined,
  task = "do it",
): Promise<{ status: number; body: { run?: string; duplicate?: boolean; error?: { code: string } } }> {
  const response = await fetch(`${daemon.url}/agents/${agent}/runs`, {
    method: "POST",
    headers: {
      ...daemon.headers(),
      "content-type": "application/json",
      ...(key === undefined ? {} : { "idempotency-key": key }),
    },
    body: JSON.stringify({ task }),
  });
  return { status: response.status, body: (await response.json()) as never };
}
