import type { SandboxView } from "../../sandbox/sandbox-view.js";

/** What `agentd validate --sandbox <agent>` reports of one agent's sandbox (its `--json` form too). */
export interface AgentSandboxReport {
  agent: string;
  /** `workspace-write`, `read-only` or `off`; absent when the agent has no valid definition. */
  mode?: string;
  /** Null for `mode: off` (no sandbox) or an agent without a valid definition. */
  view: SandboxView | null;
  /** Why there is no view to show, when there is none. */
  problem?: string;
}

/**
 * The three lists for a person, one path a line: what the agent's shell commands and hooks may
 * change, only read, and not see at all.
 */
export function formatSandboxView(report: AgentSandboxReport): string {
  const { agent, view } = report;
  if (report.problem !== undefined) return `sandbox of agent ${agent}: ${report.problem}\n`;
  if (view === null) {
    return (
      `sandbox of agent ${agent}: OFF — its shell commands, CLI worker and hooks run without the OS sandbox ` +
      "and see (and may change) everything the daemon can, every secret included\n"
    );
  }
  const network =
    typeof view.network === "string"
      ? view.network
      : `only through agentd's proxy to ${view.network.join(", ")}`;
  const lines = [
    `sandbox of agent ${agent} (mode ${report.mode ?? "?"}, network ${network}) — what its shell commands and hooks see:`,
    "  writable:",
    ...paths(view.writable, (entry) =>
      view.private.includes(entry) ? "private: empty for each command, not the host's" : undefined,
    ),
    "  read-only:",
    ...paths(view.read_only, (entry) => (entry === "/" ? "everything not listed otherwise" : undefined)),
    "  hidden:",
    ...paths(view.hidden, () => undefined),
    "  A path's access holds for everything below it, except the deeper paths listed.",
  ];
  return `${lines.join("\n")}\n`;
}

function paths(entries: readonly string[], noteOf: (entry: string) => string | undefined): string[] {
  if (entries.length === 0) return ["    (none)"];
  return entries.map((entry) => {
    const note = noteOf(entry);
    return `    ${entry}${note === undefined ? "" : `  (${note})`}`;
  });
}
