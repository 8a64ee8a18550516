import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type {
  AgentDetail,
  AgentsService,
  ApprovalsService,
  RunsService,
} from "../../src/api/api-services.js";
import type { PendingApproval } from "../../src/approvals/approval-broker.js";
import type { RunFilter } from "../../src/runs/run-filter.js";
import { type ApiServer, startApiServer } from "../../src/api/api-server.js";
import type { Clock } from "../../src/clock/clock.js";
import type { TokenIdentifier } from "../../src/api/api-auth.js";
import type { StartingServer } from "../../src/api/starting-server.js";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { EventBus } from "../../src/events/event-bus.js";
import { EventStore } from "../../src/events/event-store.js";
import { createLogger } from "../../src/logging/logger.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { isTerminal } from "../../src/run-vocabulary/run-status.js";

export const logger = createLogger({ level: "silent", pretty: false });

export function agentDetail(id: string, valid = true): AgentDetail {
  return {
    id,
    name: id,
    description: `the ${id} agent`,
    valid,
    errors: valid ? [] : ["description: description is required"],
    warnings: [],
    worker: "llm",
    schedule: null,
    next_fire: null,
    enabled: true,
    unsandboxed: false,
    last_run: null,
    file: `/agents/${id}.md`,
    sandbox_view: null,
    definition: null,
  };
}

/** Agents held in a map. */
export class FixedAgents implements AgentsService {
  readonly agents = new Map<string, AgentDetail>();
  constructor(...agents: AgentDetail[]) {
    for (const agent of agents) this.agents.set(agent.id, agent);
  }
  list() {
    return [...this.agents.values()].map(
      ({ file: _file, definition: _definition, sandbox_view: _view, ...summary }) => summary,
    );
  }
  get(id: string) {
    return this.agents.get(id);
  }
}

/** A runs service whose runs "work" at once: each start publishes running, a thought, a result, completed. */
export class InstantRuns implements RunsService {
  readonly records = new Map<string, RunRecord>();
  queued = 0;
  #count = 0;
  constructor(
    private readonly bus: EventBus,
    private readonly agents: FixedAgents,
  ) {}

  /** Keys of the runs started with an idempotency key (agent, key → run). */
  readonly #keys = new Map<string, RunRecord>();

  async startOnce(agentId: string, task: string | undefined, idempotencyKey: string) {
    const held = this.#keys.get(`${agentId} ${idempotencyKey}`);
    if (held) return { run: held, duplicate: true };
    const run = await this.start(agentId, task);
    this.#keys.set(`${agentId} ${idempotencyKey}`, run);
    return { run, duplicate: false };
  }

  async start(agentId: string, task: string | undefined): Promise<RunRecord> {
    const agent = this.agents.get(agentId);
    if (!agent) throw new AgentdError("NOT_FOUND", `no agent "${agentId}"`);
    if (!agent.valid) throw new AgentdError("CONFLICT", `agent "${agentId}" is invalid`);
    const id = `r_${++this.#count}`;
    const now = new Date().toISOString();
    const record: RunRecord = {
      id,
      agent: agentId,
      task: task ?? "default task",
      status: "running",
      trigger: { kind: "api" },
      definition_hash: "hash",
      created_at: now,
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      cost_usd: 0,
    };
    this.records.set(id, record);
    this.bus.publish({ agent: agentId, run: id, type: "status", data: { status: "running" } });
    this.bus.publish({
      agent: agentId,
      run: id,
      type: "thought",
      data: { text: `working on ${record.task}` },
    });
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    this.bus.publish({
      agent: agentId,
      run: id,
      type: "result",
      data: { text: "done", usage, cost_usd: 0.25, worker: "llm" },
    });
    this.bus.publish({
      agent: agentId,
      run: id,
      type: "status",
      data: { status: "completed", usage, cost_usd: 0.25 },
    });
    Object.assign(record, { status: "completed", usage, cost_usd: 0.25, result: "done", ended_at: now });
    return { ...record, status: "running" };
  }
  list(filter: RunFilter) {
    return Promise.resolve(
      [...this.records.values()].filter(
        (record) =>
          (filter.agent === undefined || record.agent === filter.agent) &&
          (filter.status === undefined || record.status === filter.status),
      ),
    );
  }
  get(runId: string) {
    return this.records.get(runId);
  }
  find(runId: string) {
    return Promise.resolve(this.records.get(runId));
  }
  unfinished() {
    return [...this.records.values()].filter(
      (record) => !["completed", "failed", "stopped"].includes(record.status),
    );
  }
  pause(runId: string) {
    return this.#control(runId, "pause");
  }
  resume(runId: string) {
    return this.#control(runId, "resume");
  }
  stop(runId: string) {
    return this.#control(runId, "stop");
  }
  queueDepth() {
    return this.queued;
  }
  #control(runId: string, action: string): RunRecord {
    const record = this.records.get(runId);
    if (!record) throw new AgentdError("NOT_FOUND", `no run "${runId}"`);
    if (isTerminal(record.status)) {
      throw new AgentdError("CONFLICT", `cannot ${action} run ${runId}: it is ${record.status}`);
    }
    return record;
  }
}

/** Pending approvals in a list; deciding removes one. */
export class ListedApprovals implements ApprovalsService {
  readonly decisions: Array<{ id: string; decision: string; scope: string | undefined }> = [];
  constructor(public pending: PendingApproval[] = []) {}
  list() {
    return this.pending;
  }
  decide(id: string, decision: "approve" | "deny", options?: { scope?: "once" | "run" }) {
    if (!this.pending.some((approval) => approval.id === id)) {
      throw new AgentdError("APPROVAL_NOT_FOUND", `no pending approval "${id}"`);
    }
    this.pending = this.pending.filter((approval) => approval.id !== id);
    this.decisions.push({ id, decision, scope: options?.scope });
  }
}

export interface ApiFixture {
  url: string;
  bus: EventBus;
  store: EventStore;
  agents: FixedAgents;
  runs: InstantRuns;
  approvals: ListedApprovals;
  server: ApiServer;
  dataDirectory: string;
  /** fetch against the server, with the token when one is set. */
  request(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export interface ApiFixtureOptions {
  token?: string;
  bufferSize?: number;
  agents?: AgentDetail[];
  heartbeatMilliseconds?: number;
  /** Default 0: a free port. */
  port?: number;
  /** A socket listening already (the daemon's start): the API takes it over. */
  listening?: StartingServer;
  /** The long polls' and sessions' time (default: the system clock). */
  clock?: Clock;
  /** The tokens accepted (default: `token` alone). */
  tokens?: TokenIdentifier;
}

/** The real server on 127.0.0.1:0 with a real bus and store in a temp dir. */
export async function startApiFixture(options: ApiFixtureOptions = {}): Promise<ApiFixture> {
  const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-api-"));
  const bus = new EventBus();
  const store = await EventStore.open({
    dataDirectory,
    bufferSize: options.bufferSize ?? 200,
    bus,
    logger,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const agents = new FixedAgents(
    ...(options.agents ?? [agentDetail("writer"), agentDetail("broken", false)]),
  );
  const runs = new InstantRuns(bus, agents);
  const approvals = new ListedApprovals();
  const server = await startApiServer(
    { agents, runs, events: store, approvals, bus, health: { version: "9.9.9", startedAt: new Date() } },
    {
      host: "127.0.0.1",
      port: options.port ?? 0,
      token: options.token,
      logger,
      listening: options.listening,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.tokens ? { tokens: options.tokens } : {}),
      ...(options.heartbeatMilliseconds === undefined
        ? {}
        : { heartbeatMilliseconds: options.heartbeatMilliseconds }),
    },
  );
  return {
    url: server.url,
    bus,
    store,
    agents,
    runs,
    approvals,
    server,
    dataDirectory,
    request(pathAndQuery, init = {}) {
      const headers = new Headers(init.headers);
      if (options.token !== undefined && !headers.has("authorization")) {
        headers.set("authorization", `Bearer ${options.token}`);
      }
      return fetch(`${server.url}${pathAndQuery}`, { ...init, headers });
    },
    async close() {
      await server.close();
      store.close();
      rmSync(dataDirectory, { recursive: true, force: true });
    },
  };
}
