import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";

import type { Config } from "../config/config-schema.js";

/** Every folder agents are read from: `agents_dir`, then the extra `agents_dirs`. */
export function agentFolders(config: Pick<Config, "agents_dir" | "agents_dirs">): string[] {
  return [config.agents_dir, ...config.agents_dirs.filter((folder) => folder !== config.agents_dir)];
}

/**
 * Which files are definitions: `agents/**\/*.md` (in any of the agent folders) and
 * `presets/*.yaml|yml`. Names starting with a dot (editor swap files, `.git`) are skipped inside a
 * folder, so an editor's temporary file is never loaded; the folder itself may be `.claude/agents`.
 */
export function isAgentFile(agentsDirectories: string | readonly string[], file: string): boolean {
  if (typeof agentsDirectories !== "string") {
    return agentsDirectories.some((directory) => isAgentFile(directory, file));
  }
  const agentsDirectory = agentsDirectories;
  const relative = path.relative(agentsDirectory, file);
  if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) return false;
  return file.endsWith(".md") && relative.split(path.sep).every((segment) => !segment.startsWith("."));
}

/** True for a `.yaml`/`.yml` file directly inside the presets folder. */
export function isPresetFile(presetsDirectory: string, file: string): boolean {
  return (
    path.dirname(file) === presetsDirectory && /\.ya?ml$/.test(file) && !path.basename(file).startsWith(".")
  );
}

/**
 * Every agent file under the agent folders, subfolders included; none from a missing folder. The
 * same files `isAgentFile` accepts, checked a folder at a time: with 1,000 agents, resolving each
 * path against its folder was most of `agentd run`'s listing.
 */
export async function listAgentFiles(agentsDirectories: readonly string[]): Promise<string[]> {
  const lists = await Promise.all(
    agentsDirectories.map(async (directory) => {
      const visible = new Map<string, boolean>();
      const isVisible = (folder: string) => {
        let answer = visible.get(folder);
        if (answer === undefined) {
          answer = path
            .relative(directory, folder)
            .split(path.sep)
            .every((segment) => !segment.startsWith("."));
          visible.set(folder, answer);
        }
        return answer;
      };
      return readFolder(
        directory,
        true,
        (entry) => entry.name.endsWith(".md") && isVisible(entry.parentPath),
      );
    }),
  );
  return [...new Set(lists.flat())];
}

/** Every preset file in the presets folder; none when the folder is missing. */
export async function listPresetFiles(presetsDirectory: string): Promise<string[]> {
  const entries = await readFolder(presetsDirectory, false, () => true);
  return entries.filter((file) => isPresetFile(presetsDirectory, file));
}

/** The files (and links) of a folder that `wanted` keeps, not named with a leading dot, sorted. */
async function readFolder(
  directory: string,
  recursive: boolean,
  wanted: (entry: Dirent) => boolean,
): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { recursive, withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  // `path.join(folder, name)`, with the folder's part joined once per folder.
  const prefixes = new Map<string, string>();
  const files: string[] = [];
  for (const entry of entries) {
    if (!(entry.isFile() || entry.isSymbolicLink()) || entry.name.startsWith(".") || !wanted(entry)) continue;
    let prefix = prefixes.get(entry.parentPath);
    if (prefix === undefined) {
      prefix = path.join(entry.parentPath, path.sep);
      prefixes.set(entry.parentPath, prefix);
    }
    files.push(prefix + entry.name);
  }
  return files.sort();
}
