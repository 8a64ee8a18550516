import { readdir } from "node:fs/promises";
import path from "node:path";

/**
 * Which files are definitions: `agents/**\/*.md` and `presets/*.yaml|yml`. Names starting with a
 * dot (editor swap files, `.git`) are skipped, so an editor's temporary file is never loaded.
 */
export function isAgentFile(agentsDirectory: string, file: string): boolean {
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

/** Every agent file under the agents folder, subfolders included; none when the folder is missing. */
export async function listAgentFiles(agentsDirectory: string): Promise<string[]> {
  const entries = await readFolder(agentsDirectory, true);
  return entries.filter((file) => isAgentFile(agentsDirectory, file));
}

/** Every preset file in the presets folder; none when the folder is missing. */
export async function listPresetFiles(presetsDirectory: string): Promise<string[]> {
  const entries = await readFolder(presetsDirectory, false);
  return entries.filter((file) => isPresetFile(presetsDirectory, file));
}

async function readFolder(directory: string, recursive: boolean): Promise<string[]> {
  try {
    const entries = await readdir(directory, { recursive, withFileTypes: true });
    return entries
      .filter((entry) => entry.isFile() || entry.isSymbolicLink())
      .map((entry) => path.join(entry.parentPath, entry.name))
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}
