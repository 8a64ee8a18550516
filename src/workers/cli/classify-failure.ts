import type { ErrorCode } from "../../errors/error-codes.js";
import { CLI_FAILURE_CODES, type CliFailureKind } from "../../run-vocabulary/cli-failure-kind.js";
import { formatDuration } from "../../util/duration.js";
import type { CliAdapter } from "./cli-adapter.js";
import type { CliTranscript } from "./cli-transcript.js";
import { extractRetryTime } from "./retry-time.js";
import type { CliExit } from "./run-cli-process.js";
import { stderrExcerpt } from "./stderr-excerpt.js";

export interface CliFailure {
  kind: CliFailureKind;
  code: ErrorCode;
  message: string;
  /** When a quota or rate limit ends, if the tool said so. */
  retryAt?: Date;
}

export interface ClassifyInput {
  adapter: CliAdapter;
  exit: CliExit;
  transcript: CliTranscript;
  idleTimeoutMilliseconds: number;
  now: Date;
}

const AUTH_PATTERN =
  /unauthori[sz]ed|invalid[ _-]?(x-)?api[ _-]?key|authentication[ _]?(failed|error|required)|not (logged|signed) in|\/login|oauth token (has )?expired|login required|invalid (credentials|token)|permission[ _]denied|FatalAuthenticationError/i;
const QUOTA_PATTERN =
  /usage limit|quota|(hour|daily|weekly|session|monthly) limit|resource_exhausted|insufficient_quota|credit balance|out of credits|hit your (usage )?limit/i;
const RATE_LIMIT_PATTERN = /\b429\b|rate[ _-]?limit|too many requests|overloaded|\b529\b/i;
/** The API could not be reached at all (Claude Code, Gemini CLI and Codex wordings). */
const NETWORK_PATTERN =
  /unable to connect|ECONNREFUSED|ConnectionRefused|ENOTFOUND|EAI_AGAIN|getaddrinfo|fetch failed|connection (refused|failed|error)|waiting for network|network is unreachable/i;

/**
 * Classifies a finished CLI child: undefined when it did its work. Structured output comes first
 * (the tool's result/error lines and their HTTP status), then execa's facts (spawn error, timeout,
 * exit code, signal) and the adapter's documented exit codes, then stderr text. A crash carries
 * the last lines of stderr: `exit.stderrTail` must be masked already.
 */
export function classifyFailure(input: ClassifyInput): CliFailure | undefined {
  const { adapter, exit, transcript, now } = input;
  const failure = (kind: CliFailureKind, message: string, retryText = ""): CliFailure => {
    const retryAt = kind === "quota" || kind === "rate_limit" ? extractRetryTime(retryText, now) : undefined;
    return { kind, code: CLI_FAILURE_CODES[kind], message, ...(retryAt ? { retryAt } : {}) };
  };

  if (exit.spawnErrorCode === "ENOENT" || exit.spawnErrorCode === "EACCES") {
    const problem = exit.spawnErrorCode === "ENOENT" ? "was not found" : "is not executable";
    return failure("not_installed", `${adapter.tool}: the command "${adapter.command}" ${problem}`);
  }
  if (exit.ending?.kind === "cancelled" && exit.ending.error.code === "CLI_HUNG") {
    const idle = formatDuration(input.idleTimeoutMilliseconds);
    const notice = transcript.lastRetryNotice ?? lastRetryLine(exit.stderrTail, transcript.cutEnd);
    if (notice === undefined)
      return failure("hung", `${adapter.tool} made no progress for ${idle} and was killed`);
    // Only retries: a quota or rate limit it kept retrying is that, anything else is the network.
    const message = `${adapter.tool} made no progress for ${idle}, only retried (the last notice: ${notice}), and was killed`;
    const kind = limitKind(undefined, notice);
    return failure(kind === "quota" || kind === "rate_limit" ? kind : "hung", message, notice);
  }
  if (exit.ending?.kind === "run" && exit.ending.reason === "timeout")
    return failure("timeout", `${adapter.tool} passed the run's timeout and was killed`);

  const reported = transcript.errors.join("\n");
  const everything = `${reported}\n${exit.stderrTail}`;
  const structuredKind = limitKind(transcript.httpStatus, reported);
  if (structuredKind)
    return failure(structuredKind, describe(adapter, reported, transcript.cutEnd), everything);

  const exited = exit.exitCode !== undefined && exit.exitCode !== 0;
  const hint = exited && exit.exitCode !== undefined ? adapter.exitCodeHint?.(exit.exitCode) : undefined;
  if (hint) {
    const kind = hint.kind === "rate_limit" && QUOTA_PATTERN.test(everything) ? "quota" : hint.kind;
    const detail = reported || telltaleLine(exit.stderrTail);
    return failure(kind, `${hint.message}${detail ? `: ${detail}` : ""}`, everything);
  }
  if (exited || exit.signal) {
    const textKind = limitKind(undefined, exit.stderrTail);
    const detail = reported || telltaleLine(exit.stderrTail) || exit.message;
    if (textKind) return failure(textKind, describe(adapter, detail, transcript.cutEnd), everything);
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`;
    return failure(
      "crash",
      `${adapter.tool} ${how}${detail ? `: ${detail}` : ""}${lastLines(exit.stderrTail)}`,
    );
  }
  if (exit.failed) return failure("crash", `${adapter.tool} failed: ${exit.message}`);
  if (transcript.final?.isError) return failure("crash", describe(adapter, reported, transcript.cutEnd));
  if (adapter.hasFinalLine && !transcript.final) {
    return failure("no_result", `${adapter.tool} exited 0 without its final result line`);
  }
  if (transcript.answer === "") return failure("no_result", `${adapter.tool} exited 0 without an answer`);
  return undefined;
}

function limitKind(httpStatus: number | undefined, text: string): CliFailureKind | undefined {
  if (httpStatus === 401 || httpStatus === 403 || AUTH_PATTERN.test(text)) return "auth";
  if (httpStatus === 402 || QUOTA_PATTERN.test(text)) return "quota";
  if (httpStatus === 429 || httpStatus === 529 || RATE_LIMIT_PATTERN.test(text)) return "rate_limit";
  if (httpStatus === undefined && NETWORK_PATTERN.test(text)) return "network";
  return undefined;
}

/** What the tool reported, cut at 500 characters (`cutEnd` masks a secret the cut leaves in part). */
function describe(adapter: CliAdapter, detail: string, cutEnd: (text: string) => string): string {
  const trimmed = detail.trim();
  return `${adapter.tool} reported: ${trimmed.length > 500 ? `${cutEnd(trimmed.slice(0, 500))}…` : trimmed}`;
}

/** The last lines of stderr (bounded) after a crash, when there is more than the one line shown. */
function lastLines(stderr: string): string {
  const excerpt = stderrExcerpt(stderr);
  return excerpt.includes("\n") ? `\nlast lines of stderr:\n${excerpt}` : "";
}

/** The most telling line of stderr: the last one that is not a stack frame. */
function telltaleLine(text: string): string {
  const lines = text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  return lines.findLast((line) => !/^at\s/.test(line)) ?? lines.at(-1) ?? "";
}

/** The last stderr line that announces a retry or reconnect (CLIs print those on stderr). */
function lastRetryLine(stderr: string, cutEnd: (text: string) => string): string | undefined {
  const line = stderr
    .split("\n")
    .map((candidate) => candidate.trim())
    .findLast((candidate) => /retry|retrying|reconnect|backoff|waiting for network/i.test(candidate));
  if (line === undefined) return undefined;
  return line.length > 300 ? cutEnd(line.slice(0, 300)) : line;
}
