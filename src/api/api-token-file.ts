import { randomBytes } from "node:crypto";
import { chmodSync, statSync } from "node:fs";
import path from "node:path";
import type { Config } from "../config/config-schema.js";
import { AgentdError } from "../errors/agentd-error.js";
import { readRegularFileSync } from "../util/read-regular-file.js";
import { replaceFileSync } from "../util/replace-file.js";

/** `<data_dir>/api.token`: the API token generated when `server.token` is not set. */
export function apiTokenFile(dataDirectory: string): string {
  return path.join(dataDirectory, "api.token");
}

/** The token in the token file, or undefined when there is none (never created here). */
export function readApiTokenFile(dataDirectory: string): string | undefined {
  let text: string;
  try {
    text = readRegularFileSync(apiTokenFile(dataDirectory));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new AgentdError(
      "CONFIG_INVALID",
      `cannot read ${apiTokenFile(dataDirectory)}: ${(error as Error).message}`,
      {
        file: apiTokenFile(dataDirectory),
        hint: "move aside what is not a file there (a new token is written at start), or run as the user that owns the data folder, or set server.token in the config",
        cause: error,
      },
    );
  }
  const token = text.trim();
  if (token === "") return undefined;
  const unsendable = UNSENDABLE.exec(token);
  if (unsendable !== null) {
    const code = unsendable[0].codePointAt(0) ?? 0;
    const what = code < 0x20 || code === 0x7f ? "a control character" : "a character outside printable ASCII";
    throw new AgentdError(
      "STORE_CORRUPT",
      `${apiTokenFile(dataDirectory)} is damaged: its token holds ${what} (U+${code.toString(16).toUpperCase().padStart(4, "0")} at position ${unsendable.index + 1}), which no client can send in an Authorization header`,
      {
        file: apiTokenFile(dataDirectory),
        hint: "delete it and start again (a new token is written; clients read it from the file), or set server.token in the config",
      },
    );
  }
  return token;
}

/** What a bearer token cannot hold: anything but visible ASCII (a header carries no other byte safely). */
const UNSENDABLE = /[^\x21-\x7e]/u;

/** Where the daemon's API token comes from. */
export interface ApiTokenSource {
  /** `server.token` as written (a `{{secret:…}}` template is resolved later), or the file's token. */
  token: string;
  /** The token file, when the token is the generated one. */
  file?: string;
}

/**
 * The API token the daemon requires: `server.token` when set, none with `server.auth: none`, else
 * the token file, written on first start with a random token (256 bits, 0600, atomically). A token
 * file others can read is made private again.
 */
export function resolveApiToken(config: Config): ApiTokenSource | undefined {
  if (config.server.auth === "none") return undefined;
  if (config.server.token !== undefined && config.server.token !== "") return { token: config.server.token };
  const file = apiTokenFile(config.data_dir);
  const existing = readApiTokenFile(config.data_dir);
  if (existing !== undefined) {
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    return { token: existing, file };
  }
  const token = randomBytes(32).toString("base64url");
  replaceFileSync(file, `${token}\n`);
  return { token, file };
}

/** The URL that logs a browser in: the daemon's URL with the token, the host made reachable. */
export function loginUrl(daemonUrl: string, token: string | undefined): string {
  const url = new URL("/auth/login", daemonUrl);
  if (url.hostname === "0.0.0.0" || url.hostname === "[::]") url.hostname = "127.0.0.1";
  if (token !== undefined) url.searchParams.set("token", token);
  return url.toString();
}
