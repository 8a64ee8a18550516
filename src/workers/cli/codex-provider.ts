import { homedir } from "node:os";
import path from "node:path";
import { readPlantedFileSync } from "../../util/read-planted-file.js";

/** A config.toml bigger than this is not read (a hand-written one is a few KiB). */
const MAX_CONFIG_BYTES = 256 * 1024;

/** Retries per request and per stream instead of Codex's defaults (30 s of retrying a 500). */
const MAX_RETRIES = 1;

/**
 * `-c` overrides that cap the retries of the model provider Codex will use, when that provider is
 * one the user defined in `$CODEX_HOME/config.toml` (`model_provider = "x"` and a
 * `[model_providers.x]` table): Codex merges the override into that table. Its built-in `openai`
 * provider cannot be overridden (Codex refuses the config), so nothing is added for it.
 */
export function codexRetryOverrides(environment: Record<string, string | undefined>): string[] {
  const home = environment.CODEX_HOME ?? path.join(environment.HOME ?? homedir(), ".codex");
  // The folder is writable to every codex run's sandbox: a config.toml it made may be a FIFO.
  const text = readPlantedFileSync(path.join(home, "config.toml"), MAX_CONFIG_BYTES);
  if (text === undefined) return [];
  const provider = topLevelProvider(text);
  if (
    provider === undefined ||
    !new RegExp(`^\\s*\\[model_providers\\.(?:"${escape(provider)}"|${escape(provider)})\\]`, "m").test(text)
  ) {
    return [];
  }
  const key = /^[A-Za-z0-9_-]+$/.test(provider) ? provider : JSON.stringify(provider);
  return [
    "-c",
    `model_providers.${key}.request_max_retries=${MAX_RETRIES}`,
    "-c",
    `model_providers.${key}.stream_max_retries=${MAX_RETRIES}`,
  ];
}

/** `model_provider = "…"` before the first table header. */
function topLevelProvider(text: string): string | undefined {
  for (const line of text.split("\n")) {
    if (/^\s*\[/.test(line)) return undefined;
    const match = /^\s*model_provider\s*=\s*["']([^"']+)["']/.exec(line);
    if (match?.[1]) return match[1];
  }
  return undefined;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
