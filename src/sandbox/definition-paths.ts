import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import type { Config } from "../config/config-schema.js";

/**
 * The folders whose files define what the daemon runs: every agents folder (foreign ones such as
 * `~/.claude/agents` included) and the presets folder. A missing one is created empty, so a
 * sandboxed process cannot create it first and fill it: a folder that exists can be bound
 * read-only into every sandbox, a missing path cannot.
 */
export function definitionFolders(
  config: Pick<Config, "agents_dir" | "agents_dirs" | "presets_dir">,
): string[] {
  const folders = [config.agents_dir, ...config.agents_dirs, config.presets_dir];
  for (const folder of folders) {
    if (existsSync(folder)) continue;
    try {
      mkdirSync(folder, { recursive: true });
    } catch {
      // Not creatable (a read-only place): nothing sandboxed can create it either.
    }
  }
  return folders;
}

/**
 * The `.env` files (`.env`, `.env.local`, …) of the given folders: they hold the variables the
 * config's `${VAR}` reads, secrets included.
 */
export function environmentFiles(folders: readonly string[]): string[] {
  const files = new Set<string>();
  for (const folder of new Set(folders)) {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      if (name === ".env" || name.startsWith(".env.")) files.add(path.join(folder, name));
    }
  }
  return [...files];
}

/**
 * The files a command line names by path (`./hooks/check.sh`, `node /opt/mcp/server.js`),
 * resolved against `baseDirectory`: a hook or MCP server command the agent could rewrite would
 * run its code with the hook's say over tool calls, or in another fence. Words without a `/` are
 * programs on PATH, which no sandbox can write.
 */
export function commandFiles(commandLine: readonly string[] | string, baseDirectory: string): string[] {
  const words = typeof commandLine === "string" ? commandLine.split(/\s+/) : commandLine;
  const files: string[] = [];
  for (const word of words) {
    const unquoted = word.replace(/^['"]|['"]$/g, "").replace(/^[^=]*=(?=.*\/)/, "");
    if (!unquoted.includes("/")) continue;
    const candidate = path.resolve(baseDirectory, unquoted.replace(/^~(?=\/)/, process.env["HOME"] ?? "~"));
    try {
      if (statSync(candidate).isFile()) files.push(candidate);
    } catch {
      // Not a file: an argument that only looks like a path.
    }
  }
  return files;
}
