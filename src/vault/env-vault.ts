import { AgentdError } from "../errors/agentd-error.js";
import type { Vault } from "./vault.js";

const PREFIX = "AGENTD_SECRET_";

/** The variable holding a secret: `AGENTD_SECRET_` + the name upper-cased, `-` and `.` as `_`. */
export function environmentVariableFor(name: string): string {
  return `${PREFIX}${name.toUpperCase().replace(/[^A-Z0-9_]/g, "_")}`;
}

/**
 * Read-only secrets from `AGENTD_SECRET_<NAME>` variables (`github_token` → AGENTD_SECRET_GITHUB_TOKEN).
 * `list` shows the names as the variables spell them, lower-cased.
 */
export class EnvVault implements Vault {
  readonly backend = "env";
  readonly #environment: NodeJS.ProcessEnv;

  constructor(environment: NodeJS.ProcessEnv = process.env) {
    this.#environment = environment;
  }

  async get(name: string): Promise<string | undefined> {
    return this.#environment[environmentVariableFor(name)];
  }

  async list(): Promise<string[]> {
    return Object.keys(this.#environment)
      .filter((key) => key.startsWith(PREFIX) && key.length > PREFIX.length)
      .map((key) => key.slice(PREFIX.length).toLowerCase())
      .sort();
  }

  async set(name: string): Promise<void> {
    throw this.#readOnly("set", name);
  }

  async remove(name: string): Promise<boolean> {
    throw this.#readOnly("remove", name);
  }

  #readOnly(action: string, name: string): AgentdError {
    return new AgentdError("VAULT_UNAVAILABLE", `the env vault is read-only: cannot ${action} ${name}`, {
      field: "vault.backend",
      hint: `set or unset the variable ${environmentVariableFor(name)} in the daemon's environment, or use vault.backend: file`,
    });
  }
}
