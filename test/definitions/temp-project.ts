import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Config, ConfigSchema } from "../../src/config/config-schema.js";

/** A throw-away project folder with agents/ and presets/, and a config pointing at it. */
export interface TempProject {
  root: string;
  config: Config;
  /** Writes `agents/<relative>` and returns its absolute path. */
  writeAgent(relative: string, text: string): string;
  /** Writes `presets/<relative>` and returns its absolute path. */
  writePreset(relative: string, text: string): string;
  remove(): void;
}

export function createTempProject(configOverrides: Record<string, unknown> = {}): TempProject {
  const root = mkdtempSync(path.join(tmpdir(), "agentd-definitions-"));
  const agentsDirectory = path.join(root, "agents");
  const presetsDirectory = path.join(root, "presets");
  mkdirSync(agentsDirectory);
  mkdirSync(presetsDirectory);
  const config = {
    ...ConfigSchema.parse(configOverrides),
    agents_dir: agentsDirectory,
    presets_dir: presetsDirectory,
    data_dir: path.join(root, "data"),
  };
  const write = (directory: string, relative: string, text: string) => {
    const file = path.join(directory, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  };
  return {
    root,
    config,
    writeAgent: (relative, text) => write(agentsDirectory, relative, text),
    writePreset: (relative, text) => write(presetsDirectory, relative, text),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** A minimal valid agent file. */
export function agentText(description: string, extraFrontmatter = "", body = "Do the work."): string {
  return `---\ndescription: ${description}\n${extraFrontmatter}---\n${body}\n`;
}
