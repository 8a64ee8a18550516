import type { Config } from "../config/config-schema.js";
import { secretNamesIn } from "./secret-template.js";

/**
 * A warning for each command line of the config that names a `{{secret:…}}`: an MCP server's
 * `command`/`args`, a CLI tool's `command`/`args`. The secret is resolved there like anywhere in
 * the config, and a process's command line is readable by every user of the machine (`ps`,
 * `/proc/<pid>/cmdline`) while it runs; its `env` is readable by its own user only.
 */
export function secretsOnCommandLines(config: Config, file: string | undefined): string[] {
  if (file === undefined) return [];
  const warnings: string[] = [];
  const check = (key: string, words: readonly string[], envKey: string) => {
    const names = secretNamesIn(words);
    if (names.length === 0) return;
    const named = names.map((name) => `{{secret:${name}}}`).join(", ");
    warnings.push(
      `${file}: ${key} holds ${named}: a command line is readable by every user of this machine ` +
        `(ps) while it runs; pass the secret in ${envKey} instead`,
    );
  };
  for (const [name, server] of Object.entries(config.mcp_servers)) {
    if (!("command" in server)) continue;
    check(`mcp_servers.${name}.command/args`, [server.command, ...server.args], `mcp_servers.${name}.env`);
  }
  for (const [name, tool] of Object.entries(config.cli_tools)) {
    check(
      `cli_tools.${name}.command/args`,
      [tool.command ?? "", ...(tool.args ?? [])],
      `cli_tools.${name}.env`,
    );
  }
  return warnings;
}
