/**
 * The options each built-in CLI accepts (Claude Code 2.1, Codex CLI 0.169 `exec`, Gemini CLI 0.61),
 * so a typo in `cli_tools.<tool>.args` or an agent's `cli.args` is reported by `agentd validate`
 * instead of failing every run. Options agentd sets itself (the headless mode and the output format
 * it reads) cannot be given again.
 */
const KNOWN_FLAGS: Record<string, readonly string[]> = {
  claude: [
    "--add-dir",
    "--agent",
    "--agents",
    "--allow-dangerously-skip-permissions",
    "--allowedTools",
    "--allowed-tools",
    "--append-system-prompt",
    "--append-system-prompt-file",
    "--bare",
    "--betas",
    "--brief",
    "--chrome",
    "--dangerously-skip-permissions",
    "-d",
    "--debug",
    "--debug-file",
    "--disable-slash-commands",
    "--disallowedTools",
    "--disallowed-tools",
    "--effort",
    "--exclude-dynamic-system-prompt-sections",
    "--fallback-model",
    "--file",
    "--include-hook-events",
    "--json-schema",
    "--max-budget-usd",
    "--max-turns",
    "--mcp-config",
    "--model",
    "-n",
    "--name",
    "--no-chrome",
    "--no-session-persistence",
    "--permission-mode",
    "--plugin-dir",
    "--safe-mode",
    "--session-id",
    "--setting-sources",
    "--settings",
    "--strict-mcp-config",
    "--system-prompt",
    "--system-prompt-file",
    "--tools",
    "--verbose",
    "--include-partial-messages",
  ],
  codex: [
    "-c",
    "--config",
    "--enable",
    "--disable",
    "--strict-config",
    "-i",
    "--image",
    "-m",
    "--model",
    "--oss",
    "--local-provider",
    "-p",
    "--profile",
    "-s",
    "--sandbox",
    "--approve-for-me",
    "--dangerously-bypass-approvals-and-sandbox",
    "--dangerously-bypass-hook-trust",
    "-C",
    "--cd",
    "--add-dir",
    "--skip-git-repo-check",
    "--trust",
    "--ephemeral",
    "--ignore-user-config",
    "--ignore-rules",
    "--output-schema",
    "--color",
    "-o",
    "--output-last-message",
  ],
  gemini: [
    "-d",
    "--debug",
    "-m",
    "--model",
    "--skip-trust",
    "-s",
    "--sandbox",
    "-y",
    "--yolo",
    "--approval-mode",
    "--policy",
    "--admin-policy",
    "--allowed-mcp-server-names",
    "--allowed-tools",
    "-e",
    "--extensions",
    "--include-directories",
    "--screen-reader",
    "--raw-output",
    "--accept-raw-output-risk",
    "--session-id",
  ],
};

/** Options that would change how agentd drives or reads the tool. */
const RESERVED_FLAGS: Record<string, readonly string[]> = {
  claude: ["-p", "--print", "--output-format", "--input-format", "-c", "--continue", "-r", "--resume"],
  codex: ["--json"],
  gemini: ["-p", "--prompt", "-o", "--output-format", "-i", "--prompt-interactive", "-r", "--resume"],
};

/** True for the tools whose options agentd knows. */
export function hasKnownFlags(tool: string): boolean {
  return Object.hasOwn(KNOWN_FLAGS, tool);
}

/**
 * The problems of `args` for a built-in tool: each unknown or reserved option, by its index.
 * Only arguments that look like options are checked (values are not); nothing after `--`.
 */
export function checkCliFlags(
  tool: string,
  args: readonly string[],
): Array<{ index: number; message: string }> {
  const known = KNOWN_FLAGS[tool];
  if (!known) return [];
  const reserved = RESERVED_FLAGS[tool] ?? [];
  const problems: Array<{ index: number; message: string }> = [];
  for (const [index, argument] of args.entries()) {
    if (argument === "--") break;
    if (!argument.startsWith("-") || /^-\d/.test(argument)) continue;
    const flag = argument.split("=", 1)[0] ?? argument;
    if (reserved.includes(flag)) {
      problems.push({ index, message: `${flag} is set by agentd for ${tool}; it cannot be given again` });
    } else if (!known.includes(flag)) {
      problems.push({ index, message: `${tool} has no option ${flag}` });
    }
  }
  return problems;
}
