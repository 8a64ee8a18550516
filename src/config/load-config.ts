import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { AgentdError } from "../errors/agentd-error.js";
import { describeIssues, problemToError } from "../schema/schema-issues.js";
import { parseLocatedYaml } from "../schema/yaml-document.js";
import { mergeSandboxSettings, resolveSandboxPath } from "./sandbox-settings.js";
import { type Config, ConfigSchema } from "./config-schema.js";
import { expandEnvironment } from "./expand-env.js";

export interface LoadedConfig {
  config: Config;
  /** Absolute path of the file read, or undefined when running on defaults. */
  file: string | undefined;
  /** Directory relative paths in the config are resolved against. */
  baseDirectory: string;
  warnings: string[];
}

export interface LoadConfigOptions {
  /** An explicit `--config` file: it must exist. */
  file?: string | undefined;
  cwd?: string;
  environment?: NodeJS.ProcessEnv;
}

/**
 * Reads `config.yaml` (the `--config` file, else `./config.yaml` when present, else defaults),
 * expands `${VAR}`, validates it, and resolves the folders against the file's directory.
 * Throws one AgentdError for the first problem, with the file, line and key.
 */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const cwd = options.cwd ?? process.cwd();
  const environment = options.environment ?? process.env;
  const explicit = options.file !== undefined;
  const file = path.resolve(cwd, options.file ?? "config.yaml");
  if (!existsSync(file)) {
    if (explicit) {
      throw new AgentdError("CONFIG_NOT_FOUND", `config file ${file} does not exist`, {
        file,
        hint: "pass an existing file to --config, or copy config.example.yaml to config.yaml",
      });
    }
    return resolveFolders({
      config: ConfigSchema.parse({}),
      file: undefined,
      baseDirectory: cwd,
      warnings: [],
    });
  }
  const text = readFileSync(file, "utf8");
  const yaml = parseLocatedYaml(text);
  if (yaml.syntaxError) {
    throw new AgentdError("CONFIG_INVALID", `invalid YAML: ${yaml.syntaxError.message}`, {
      file,
      line: yaml.syntaxError.line,
      hint: "fix the YAML syntax on that line",
    });
  }
  const warnings: string[] = [];
  const expanded = expandEnvironment(yaml.value ?? {}, environment, (name) =>
    warnings.push(`${file}: environment variable ${name} is not set; using ""`),
  );
  const parsed = ConfigSchema.safeParse(expanded);
  if (!parsed.success) {
    const [first] = describeIssues(ConfigSchema, parsed.error.issues, yaml);
    if (!first) throw new AgentdError("CONFIG_INVALID", "invalid configuration", { file });
    throw problemToError(
      "CONFIG_INVALID",
      file,
      first,
      first.unknownKey
        ? "remove or rename the key; config.example.yaml lists every key"
        : "see config.example.yaml",
    );
  }
  return resolveFolders({ config: parsed.data, file, baseDirectory: path.dirname(file), warnings });
}

function resolveFolders(loaded: LoadedConfig): LoadedConfig {
  const { config, baseDirectory } = loaded;
  const resolve = (folder: string) => path.resolve(baseDirectory, folder);
  const withLocalDefault =
    config.llm.base_url === undefined && config.llm.api_key === undefined
      ? { ...config.llm, base_url: "http://127.0.0.1:11434/v1" }
      : config.llm;
  return {
    ...loaded,
    config: {
      ...config,
      agents_dir: resolve(config.agents_dir),
      agents_dirs: config.agents_dirs.map(resolve),
      presets_dir: resolve(config.presets_dir),
      data_dir: resolve(config.data_dir),
      llm: withLocalDefault,
      sandbox: {
        ...mergeSandboxSettings(
          {
            ...config.sandbox,
            read: [],
            write: [],
            unix_sockets: config.sandbox.unix_sockets.map((entry) =>
              resolveSandboxPath(entry, baseDirectory),
            ),
          },
          config.sandbox,
          baseDirectory,
        ),
        allow_unsandboxed: config.sandbox.allow_unsandboxed,
        private_addresses: config.sandbox.private_addresses,
      },
      vault: {
        ...config.vault,
        ...(config.vault.file === undefined ? {} : { file: resolve(config.vault.file) }),
        ...(config.vault.key_file === undefined ? {} : { key_file: resolve(config.vault.key_file) }),
      },
    },
  };
}
