import type { ErrorCode } from "./error-codes.js";

/**
 * The next step for every error code, in one sentence: what a user reads when the error itself
 * carries no more precise hint (an `AgentdError`'s own `hint` always wins). Written as a `Record`
 * over every code, so a new code does not type-check until it says what to do about it.
 */
export const ERROR_HINTS: Readonly<Record<ErrorCode, string>> = {
  CONFIG_INVALID: "fix the key named in config.yaml (agentd validate lists every problem with its line)",
  CONFIG_NOT_FOUND: "check the --config path, or leave it out to use ./config.yaml or the built-in defaults",
  DEFINITION_INVALID: "fix the agent file at the line and field named; agentd validate lists every problem",
  DEFINITION_DUPLICATE_ID:
    "rename one of the agent files (the id is the file's base name) or set a distinct id",
  PRESET_INVALID:
    "fix the preset file at the key named; a preset holds only prompt material (docs/presets.md)",
  PRESET_NOT_FOUND: "create the preset in presets_dir, or correct the agent's `preset:`",
  PRESET_CYCLE: "remove the loop from the presets' `extends:` chain",
  USAGE: "run the command with --help for its arguments and options",
  NOT_FOUND: "check the id (agentd agents and agentd runs list what exists)",
  CONFLICT: "check the run's or agent's current state (GET /runs/:run or agentd runs) and try what it allows",
  AGENT_DISABLED:
    "turn the agent back on: agentd enable <agent> or the dashboard's toggle (an agent file with enabled: false needs enabled: true)",
  BAD_REQUEST: "correct the request as the message says (docs/http-api.md has each route's fields)",
  UNAUTHORIZED:
    "send `Authorization: Bearer <token>`: `agentd token` prints it, or open the login URL from `agentd token --url`",
  HOST_NOT_ALLOWED: "use the bind address, localhost or 127.0.0.1, or add the name to server.allowed_hosts",
  ORIGIN_NOT_ALLOWED:
    "send the request from the daemon's own pages, or add the page's origin to server.allowed_origins",
  UNSUPPORTED_MEDIA_TYPE:
    "send the body as JSON with `content-type: application/json`, or send no body at all",
  HEADERS_TOO_LARGE: "send smaller headers (a large cookie is the usual cause: clear the site's cookies)",
  LLM_TIMEOUT:
    "the model server is slow or stalled: check it, or raise llm.timeouts (first_chunk, idle, call) in config.yaml",
  LLM_HTTP: "check llm.base_url, llm.model and llm.api_key in config.yaml against what the endpoint serves",
  LLM_NETWORK:
    "check that the LLM endpoint is up, or set llm.base_url and llm.model (and llm.api_key) in config.yaml to a server that answers",
  LLM_BAD_RESPONSE:
    "the endpoint is not speaking the OpenAI chat-completions protocol as expected: check llm.base_url (it usually ends in /v1)",
  LLM_CIRCUIT_OPEN:
    "calls resume by themselves after llm.circuit_breaker.cooldown; fix the endpoint meanwhile, or give the agent fallback_models",
  RUN_ABORTED: "start the run again when wanted; it was stopped by a user, its timeout or a shutdown",
  BUDGET_EXCEEDED: "raise the agent's limits (max_tokens, max_cost_usd, timeout) or give it a smaller task",
  LOOP_DETECTED:
    "the model repeated the same calls: make the task or instructions clearer, or try another model",
  MAX_ITERATIONS: "raise limits.max_iterations for the agent, or split the task",
  TOOL_NOT_FOUND: "add the tool to the agent's `tools:` list, or correct its name (docs/tools.md lists them)",
  TOOL_BAD_ARGUMENTS: "the model sent arguments the tool does not take; it is told and may correct itself",
  TOOL_FAILED: "read the tool's output in the run's events; the model is told and may try another way",
  TOOL_DENIED: "allow it in the agent's `permissions:` (or config `permissions`), or answer `ask` approvals",
  TOOL_TIMEOUT: "raise tools.shell_timeout or tools.http_timeout in config.yaml, or make the command faster",
  PATH_ESCAPE: "use a path inside the agent's workdir, or set `workdir:` to a folder that holds it",
  SECRET_NOT_FOUND: "store it with `agentd secrets set <name>` (the value on stdin)",
  SECRET_NOT_ALLOWED: "add the secret's name to the agent's `secrets:` list",
  VAULT_UNAVAILABLE:
    "check vault.backend and its key (AGENTD_VAULT_KEY or the 0600 key file), or use backend: file",
  VAULT_CORRUPT:
    "restore vault.json and vault.key from a backup, or move them aside and set the secrets again",
  APPROVAL_NOT_FOUND:
    "the approval was answered or expired already: list the pending ones with agentd approvals",
  MCP_UNAVAILABLE:
    "check the server's mcp_servers entry (command, args, url) and its sandbox (network hosts, read/write paths)",
  AGENT_DEPTH_EXCEEDED: "raise limits.max_agent_depth, or let the agent do the work itself",
  QUESTION_NOT_FOUND: "the question was answered or ended already: list the open ones with agentd questions",
  TOOL_INTERRUPTED: "the call was cut off by a crash or shutdown; resume the run or start it again",
  HOOK_FAILED:
    "run the hook by hand with the JSON it was given on stdin; fix its command or raise its timeout",
  SANDBOX_UNAVAILABLE:
    "install bubblewrap (sudo apt install bubblewrap) and check `agentd validate`; docs/sandbox.md",
  SANDBOX_OFF_NOT_ALLOWED:
    "list the agent id in config sandbox.allow_unsandboxed, or remove the agent file's `sandbox: off`",
  CLI_NOT_INSTALLED: "install the CLI and put it on the daemon's PATH, or set its command in cli_tools",
  CLI_AUTH:
    "log the CLI in (or set its API key variable in cli_tools.<name>.env) as the same user as the daemon",
  CLI_QUOTA: "wait for the quota to reset or raise it; the run falls back to the LLM when the agent allows",
  CLI_RATE_LIMIT:
    "wait and run again, or lower concurrency; the run falls back to the LLM when the agent allows",
  CLI_NETWORK: "check the machine's network and that the CLI's API host is reachable from its sandbox",
  CLI_TIMEOUT: "raise the agent's limits.timeout, or give it a smaller task",
  CLI_HUNG: "the CLI made no progress: run it by hand to see where it waits (a login or a prompt)",
  CLI_CRASH: "run the CLI by hand, as the daemon's user and with the same arguments, to see why it crashed",
  CLI_NO_RESULT:
    "the CLI ended without a result: run it by hand to see its output, or check its output format",
  CLI_COOLDOWN:
    "the CLI rests after a quota or rate-limit failure (cli.cooldown); wait, or use the LLM worker",
  CLI_PERMISSION_DENIED: "allow the tool in the agent's `permissions:`",
  STORE_CORRUPT: "see docs/durability.md on damaged files: move the file named aside and start again",
  STORE_WRITE_FAILED: "free space or fix permissions on data_dir, then try again",
  STORE_UNAVAILABLE: "check that PostgreSQL at store.url answers; the daemon retries by itself",
  STORAGE_FULL: "free space on the disk of data_dir; the daemon resumes writing by itself",
  DAEMON_UNREACHABLE: "start the daemon (agentd start) or check --config points at its config",
  NODE_UNREACHABLE: "the node that owns the run did not answer: check it, then try again",
  ADDRESS_IN_USE: "stop what listens on that port, or set server.port (0 picks a free one)",
  DATA_DIR_LOCKED: "another agentd uses this data_dir: stop it, or give this one another data_dir",
  SHUTTING_DOWN: "the daemon is stopping: try again once it has started again",
  FORBIDDEN_ROLE:
    "use a token whose role allows the route (agentd token create --name <name> --role <role>; docs/access.md)",
  PAYLOAD_TOO_LARGE:
    "send a smaller body: the API takes at most 1 MiB a request (a memory's content, a task); a webhook at most config triggers.webhook_body_limit (docs/triggers.md)",
  RATE_LIMITED: "deliver again after the retry-after seconds, or raise the trigger's rate_limit",
  DELIVERY_FAILED:
    "check the target's URL and credentials; GET /deliveries shows each attempt's error (docs/deliveries.md)",
  INTERNAL: "this is a bug in agentd: the daemon log has the details; please report it",
};

/** The hint of a code read from a file or an answer (a string): undefined for an unknown code. */
export function hintOfCode(code: string): string | undefined {
  return Object.hasOwn(ERROR_HINTS, code) ? ERROR_HINTS[code as ErrorCode] : undefined;
}

/** What a user should do about an error: its own hint, else the one of its code. */
export function hintFor(error: { code: ErrorCode; hint?: string | undefined }): string {
  return error.hint ?? ERROR_HINTS[error.code];
}
