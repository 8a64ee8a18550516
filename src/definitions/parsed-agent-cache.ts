import { createHash, randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { writeFile, mkdir, rename } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { packageVersion } from "../util/package-version.js";
import type { AgentFrontmatter } from "./agent-schema.js";
import type { ParsedAgentFile } from "./parse-agent-file.js";
import type { DefinitionFileContent } from "../schema/read-definition-file.js";
import { frontmatterLines } from "./split-frontmatter.js";
import { readRegularFileSync } from "../util/read-regular-file.js";

const CachedAgentSchema = z.object({
  sha256: z.string(),
  id: z.string(),
  // Written by this very build (see CACHE_IDENTITY) from a validated frontmatter: not parsed again.
  frontmatter: z.record(z.string(), z.unknown()),
  instructions: z.string(),
  warnings: z.array(z.string()),
  dialect: z.enum(["agentd", "claude-code", "opencode"]),
});
type CachedAgent = z.infer<typeof CachedAgentSchema>;

const CacheFileSchema = z.object({
  identity: z.string(),
  agents: z.record(z.string(), CachedAgentSchema),
});

/**
 * Which build wrote a cache: the version and when this module was built. A rebuilt agentd may
 * parse differently (a new field, a new default), so it starts over instead of trusting the file.
 */
const CACHE_IDENTITY = `${packageVersion()}@${statSync(fileURLToPath(import.meta.url)).mtimeMs}`;

/**
 * Agent files as the last start parsed them, in `<data_dir>/cache/agents.json`, so a restart with
 * 1,000 unchanged agents does not parse 1,000 YAML frontmatters again. An entry is used only for
 * the same path with the same bytes (sha256 of the file just read) and the same build; files with
 * errors are never cached, so every problem is reported freshly. Presets, duplicates, references
 * and the config are applied after this, on every start, as before.
 */
export class ParsedAgentCache {
  readonly #file: string;
  readonly #previous: Map<string, CachedAgent>;
  readonly #next = new Map<string, CachedAgent>();
  #changed = false;

  private constructor(file: string, previous: Map<string, CachedAgent>) {
    this.#file = file;
    this.#previous = previous;
  }

  /** The cache of `dataDirectory`; empty when there is none yet, it is damaged, or another build wrote it. */
  static open(dataDirectory: string): ParsedAgentCache {
    const file = path.join(dataDirectory, "cache", "agents.json");
    let previous = new Map<string, CachedAgent>();
    try {
      // Only a regular file: a FIFO there held the start for ever, a link to /dev/zero filled memory.
      const parsed = CacheFileSchema.safeParse(JSON.parse(readRegularFileSync(file)));
      if (parsed.success && parsed.data.identity === CACHE_IDENTITY) {
        previous = new Map(Object.entries(parsed.data.agents));
      }
    } catch {
      // No cache yet, or one that cannot be read: every file is parsed.
    }
    return new ParsedAgentCache(file, previous);
  }

  /** The file as parsed before, when its bytes are the same; undefined otherwise. */
  lookup(file: string, content: DefinitionFileContent): ParsedAgentFile | undefined {
    const cached = this.#previous.get(file);
    if (!cached || cached.sha256 !== sha256(content.bytes)) return undefined;
    this.#next.set(file, cached);
    return {
      id: cached.id,
      file,
      bytes: content.bytes,
      frontmatter: cached.frontmatter as AgentFrontmatter,
      instructions: cached.instructions,
      lineOf: frontmatterLines(content.text),
      errors: [],
      warnings: [...cached.warnings],
      dialect: cached.dialect,
    };
  }

  /** Keeps a file just parsed for the next start, if it had no errors. */
  remember(parsed: ParsedAgentFile): void {
    if (parsed.errors.length > 0 || !parsed.frontmatter) return;
    this.#changed = true;
    this.#next.set(parsed.file, {
      sha256: sha256(parsed.bytes),
      id: parsed.id,
      frontmatter: parsed.frontmatter,
      instructions: parsed.instructions,
      warnings: parsed.warnings,
      dialect: parsed.dialect,
    });
  }

  /**
   * Writes what this start read (files gone since are dropped), once, when anything changed. The
   * write is off the start's path and a failure only costs the next start its cache.
   */
  async save(): Promise<void> {
    if (!this.#changed && this.#next.size === this.#previous.size) return;
    const text = JSON.stringify({ identity: CACHE_IDENTITY, agents: Object.fromEntries(this.#next) });
    await mkdir(path.dirname(this.#file), { recursive: true });
    const temporary = `${this.#file}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(temporary, text, { mode: 0o600 });
    await rename(temporary, this.#file);
  }
}

function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}
