import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { type Config, ConfigSchema } from "../../src/config/config-schema.js";

/** What a test may set on the project it builds. */
export interface TempProjectOptions {
  /** Points `llm` at this OpenAI-compatible URL (key `test-key`, model `scripted`). */
  llmUrl?: string;
  /** Top-level config values over the project's defaults; a key given replaces the default's whole value. */
  config?: Record<string, unknown>;
  /**
   * Where the project folder is made (default the system's temp folder). A sandbox test needs one
   * outside /tmp: a sandbox's /tmp is private, which would hide the whole project by accident.
   */
  parent?: string;
}

/**
 * A throw-away project folder: `config.yaml`, `agents/`, `presets/` and `data/`, the config pointing
 * at them (relative paths in the file, for a daemon started in `root`; absolute in `config`, for code
 * under test that takes a parsed config).
 */
export interface TempProject {
  root: string;
  configFile: string;
  agentsDirectory: string;
  presetsDirectory: string;
  dataDirectory: string;
  /** The config file's values, parsed (when first read: a test may write a config the schema refuses), with the folders absolute. */
  readonly config: Config;
  /** Writes `agents/<id>.md` with this frontmatter (a description added unless given) and a short body. */
  writeAgent(id: string, frontmatter: Record<string, unknown>): string;
  /** Writes `agents/<relative>` with this exact text and returns its absolute path. */
  writeAgent(relative: string, text: string): string;
  removeAgent(id: string): void;
  /** Writes `presets/<relative>` and returns its absolute path. */
  writePreset(relative: string, text: string): string;
  remove(): void;
}

export function createTempProject(options: TempProjectOptions = {}): TempProject {
  const root = mkdtempSync(path.join(options.parent ?? tmpdir(), "agentd-project-"));
  const agentsDirectory = path.join(root, "agents");
  const presetsDirectory = path.join(root, "presets");
  const dataDirectory = path.join(root, "data");
  mkdirSync(agentsDirectory);
  mkdirSync(presetsDirectory);
  const values: Record<string, unknown> = {
    agents_dir: "./agents",
    presets_dir: "./presets",
    data_dir: "./data",
    server: { host: "127.0.0.1", port: 0 },
    ...(options.llmUrl === undefined
      ? {}
      : { llm: { base_url: options.llmUrl, api_key: "test-key", model: "scripted" } }),
    log: { level: "info", pretty: false },
    ...options.config,
  };
  const configFile = path.join(root, "config.yaml");
  writeFileSync(configFile, stringify(values));
  const write = (directory: string, relative: string, text: string) => {
    const file = path.join(directory, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  };
  const writeAgent = (name: string, content: string | Record<string, unknown>): string =>
    typeof content === "string"
      ? write(agentsDirectory, name, content)
      : write(agentsDirectory, `${name}.md`, agentFileOf(name, content));
  let config: Config | undefined;
  return {
    root,
    configFile,
    agentsDirectory,
    presetsDirectory,
    dataDirectory,
    get config() {
      config ??= {
        ...ConfigSchema.parse(values),
        agents_dir: agentsDirectory,
        presets_dir: presetsDirectory,
        data_dir: dataDirectory,
      };
      return config;
    },
    writeAgent,
    removeAgent: (id) => rmSync(path.join(agentsDirectory, `${id}.md`)),
    writePreset: (relative, text) => write(presetsDirectory, relative, text),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Agent `id`'s file: this frontmatter (a description added unless given) and a one-line body. */
function agentFileOf(id: string, frontmatter: Record<string, unknown>): string {
  const description = `${id} for tests`;
  return `---\n${stringify({ description, ...frontmatter })}---\nDo the task you are given.\n`;
}

/** A minimal valid agent file with frontmatter written as text (for files a test wants exactly so). */
export function agentText(description: string, extraFrontmatter = "", body = "Do the work."): string {
  return `---\ndescription: ${description}\n${extraFrontmatter}---\n${body}\n`;
}
