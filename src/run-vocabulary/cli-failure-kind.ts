import type { ErrorCode } from "../errors/error-codes.js";

/**
 * Why a CLI run failed; every kind but `timeout` is a reason to fall back to the LLM worker. Named
 * here, below the events and the workers, because a `fallback` event tells it (SPEC 5).
 */
export type CliFailureKind =
  "not_installed" | "auth" | "quota" | "rate_limit" | "network" | "timeout" | "hung" | "crash" | "no_result";

/** The error code each kind of CLI failure is reported with. */
export const CLI_FAILURE_CODES: Record<CliFailureKind, ErrorCode> = {
  not_installed: "CLI_NOT_INSTALLED",
  auth: "CLI_AUTH",
  quota: "CLI_QUOTA",
  rate_limit: "CLI_RATE_LIMIT",
  network: "CLI_NETWORK",
  timeout: "CLI_TIMEOUT",
  hung: "CLI_HUNG",
  crash: "CLI_CRASH",
  no_result: "CLI_NO_RESULT",
};
