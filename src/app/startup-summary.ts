import { LOCAL_OLLAMA_URL } from "../llm/unreachable-hint.js";
import { type SandboxStatus, describeSandboxStatus, sandboxStatus } from "../sandbox/sandbox-status.js";
import type { Daemon } from "./daemon.js";

/** What the daemon says when it is up: agents loaded, the broken ones, next fires, the URL. */
export interface StartupSummary {
  url: string;
  agents: Array<{ id: string; valid: boolean; first_error?: string; next_fire?: string; disabled?: true }>;
  /** Runs found interrupted by a crash and marked failed. */
  recovered_runs: number;
  /** The endpoint and model the LLM worker uses when an agent names no model. */
  llm: { endpoint: string; model: string };
  /** Whether the OS sandbox works on this machine. */
  sandbox: SandboxStatus;
  /** The store; with postgres, this node's id and the cluster's nodes (id and URL) at start. */
  store: { backend: "files" | "postgres"; node?: string; nodes?: Array<{ id: string; url: string | null }> };
}

export function summarizeStartup(daemon: Daemon): StartupSummary {
  const snapshot = daemon.definitions.snapshot();
  return {
    url: daemon.url,
    agents: snapshot.agents.map((status) => {
      const firstError = status.errors[0]?.describe();
      const nextFire = daemon.scheduler.nextFire(status.id)?.toISOString();
      const disabled = status.definition?.frontmatter.enabled === false;
      return {
        id: status.id,
        valid: status.valid,
        ...(disabled ? { disabled: true as const } : {}),
        ...(firstError === undefined ? {} : { first_error: firstError }),
        ...(nextFire === undefined ? {} : { next_fire: nextFire }),
      };
    }),
    recovered_runs: daemon.runs.recovered.length,
    llm: { endpoint: daemon.config.llm.base_url ?? LOCAL_OLLAMA_URL, model: daemon.config.llm.model },
    sandbox: sandboxStatus(daemon.sandbox.availability(), daemon.config.sandbox.mode),
    store: {
      backend: daemon.store.backend,
      ...(daemon.cluster
        ? {
            node: daemon.cluster.node,
            nodes: daemon.cluster.nodes.map((node) => ({ id: node.id, url: node.url })),
          }
        : {}),
    },
  };
}

/**
 * How the summary tells a person to log a browser in: authentication is off; the login URL itself
 * (it carries the API token: only for an interactive terminal); or the command that prints it
 * (anywhere else — a journal, `docker logs`, a file — where the token must not land).
 */
export type LoginLine =
  { kind: "auth-off" } | { kind: "url"; url: string } | { kind: "hint"; command: string };

/**
 * The summary as a few lines for a person at a terminal. A `url` login line carries the API token:
 * it is shown here once, never in the JSON line or the logs.
 */
export function formatStartupSummary(summary: StartupSummary, login: LoginLine): string {
  const valid = summary.agents.filter((agent) => agent.valid);
  const invalid = summary.agents.filter((agent) => !agent.valid);
  const lines = [
    `agentd listening on ${summary.url}`,
    `LLM: model ${summary.llm.model} at ${summary.llm.endpoint}`,
    loginLineText(login),
    `${valid.length} agent(s) loaded, ${invalid.length} invalid`,
    describeSandboxStatus(summary.sandbox),
  ];
  if (summary.store.node !== undefined) {
    lines.push(
      `store: postgres, this node ${summary.store.node}; ${summary.store.nodes?.length ?? 0} node(s) in the cluster:`,
    );
    for (const node of summary.store.nodes ?? []) lines.push(`  ${node.id}  ${node.url ?? "(starting)"}`);
  }
  for (const agent of valid) {
    const state = agent.disabled
      ? "  disabled (enabled: false): no scheduled or API runs until enabled"
      : agent.next_fire
        ? `  next run ${agent.next_fire}`
        : "";
    lines.push(`  ${agent.id}${state}`);
  }
  for (const agent of invalid) lines.push(`  ${agent.id}  INVALID: ${agent.first_error ?? "unknown error"}`);
  if (summary.recovered_runs > 0) {
    lines.push(`${summary.recovered_runs} run(s) interrupted by a crash were marked failed (crashed)`);
  }
  return `${lines.join("\n")}\n`;
}

function loginLineText(login: LoginLine): string {
  switch (login.kind) {
    case "auth-off":
      return "authentication is off (server.auth: none)";
    case "url":
      return `log a browser in: ${login.url}  (agentd token prints the token)`;
    case "hint":
      return `log a browser in: run \`${login.command}\` for the URL (the token is shown only on a terminal)`;
  }
}
