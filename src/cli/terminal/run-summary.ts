import { hintOfCode } from "../../errors/error-hints.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { paint } from "./terminal-style.js";

export interface RunSummaryOutput {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  color: boolean;
}

/**
 * The end of `agentd run`: the result text alone on stdout (so `agentd run x > out.md` works), and
 * the error and an outcome line on stderr: `■ completed in 2.1 s · 25 tokens · $0.0012`.
 */
export function printRunSummary(record: RunRecord, output: RunSummaryOutput): void {
  const seconds =
    record.ended_at && record.started_at
      ? (Date.parse(record.ended_at) - Date.parse(record.started_at)) / 1000
      : 0;
  const outcome = [record.status, record.reason].filter(Boolean).join(" · ");
  const cost = record.cost_usd > 0 ? ` · $${record.cost_usd.toFixed(4)}` : "";
  const summary = `■ ${outcome} in ${seconds.toFixed(1)} s · ${record.usage.total_tokens} tokens${cost}\n`;
  if (record.status === "completed" && record.result)
    output.stdout(record.result.endsWith("\n") ? record.result : `${record.result}\n`);
  if (record.error && record.status !== "completed") {
    output.stderr(`${record.error.code}: ${record.error.message}\n`);
    const hint = record.error.hint ?? hintOfCode(record.error.code);
    if (hint) output.stderr(`  to fix: ${hint}\n`);
  }
  output.stderr(paint(output.color, record.status === "completed" ? "green" : "red", summary));
}
