import { stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import { readRegularFile } from "../util/read-regular-file.js";
import { replaceFile } from "../util/replace-file.js";
import { type TokenRecord, TokenRecordSchema } from "./api-token.js";
import type { TokenStore } from "./token-store.js";

const TokenFileSchema = z.object({ tokens: z.array(TokenRecordSchema) });

/** `<data_dir>/tokens.json`: the named tokens of a daemon on the files store (hashes only, 0600). */
export function tokensFile(dataDirectory: string): string {
  return path.join(dataDirectory, "tokens.json");
}

/**
 * Named tokens in `<data_dir>/tokens.json`, replaced atomically on every change (a crash leaves the
 * old list or the new one). Changes are made one at a time; `version` follows the file, so an edit
 * by another process is picked up too.
 */
export class FilesTokenStore implements TokenStore {
  readonly #file: string;
  #changing: Promise<unknown> = Promise.resolve();

  constructor(dataDirectory: string) {
    this.#file = tokensFile(dataDirectory);
  }

  async list(): Promise<TokenRecord[]> {
    let text: string;
    try {
      text = await readRegularFile(this.#file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      // A folder in its place answered 500 INTERNAL ("a bug in agentd") to every token change.
      if ((error as NodeJS.ErrnoException).code === "EISDIR") {
        throw new AgentdError("STORE_CORRUPT", `${this.#file} is a folder, not a regular file`, {
          file: this.#file,
          hint: "move it aside (look at it, then delete it): the named tokens are then those of a new, empty list",
          details: { code: "EISDIR" },
          cause: error,
        });
      }
      throw error;
    }
    let parsed: ReturnType<typeof TokenFileSchema.safeParse>;
    try {
      parsed = TokenFileSchema.safeParse(JSON.parse(text));
    } catch (error) {
      throw this.#corrupt(error);
    }
    if (!parsed.success) throw this.#corrupt(parsed.error);
    return parsed.data.tokens;
  }

  create(record: TokenRecord): Promise<void> {
    return this.#change(async (tokens) => {
      if (tokens.some((token) => token.name === record.name)) {
        throw new AgentdError("CONFLICT", `a token named "${record.name}" exists`, {
          field: "name",
          hint: "pick another name, or revoke the old token first",
        });
      }
      return [...tokens, record];
    }).then(() => undefined);
  }

  async revoke(name: string): Promise<boolean> {
    let found = false;
    await this.#change(async (tokens) => {
      found = tokens.some((token) => token.name === name);
      return tokens.filter((token) => token.name !== name);
    });
    return found;
  }

  async version(): Promise<string> {
    try {
      const stats = await stat(this.#file, { bigint: true });
      return `${stats.ino}:${stats.mtimeNs}:${stats.size}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return "none";
      throw error;
    }
  }

  #change(edit: (tokens: TokenRecord[]) => Promise<TokenRecord[]>): Promise<void> {
    const next = this.#changing.then(async () => {
      const tokens = await edit(await this.list());
      await replaceFile(this.#file, `${JSON.stringify({ tokens }, null, 2)}\n`);
    });
    this.#changing = next.catch(() => undefined);
    return next;
  }

  #corrupt(cause: unknown): AgentdError {
    return new AgentdError("STORE_CORRUPT", `${this.#file} is not a token list`, {
      file: this.#file,
      hint: "restore it from a backup, or remove it (every named token is then revoked)",
      cause,
    });
  }
}
