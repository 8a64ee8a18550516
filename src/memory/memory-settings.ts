import { z } from "zod";

/** How an agent uses memory: not at all, reads it in its prompt, or reads and curates it. */
export const MemoryModeSchema = z.enum(["none", "read", "write"]);
export type MemoryMode = z.infer<typeof MemoryModeSchema>;

/** Default bound of the memory shown in a prompt, and of what the memory tools let it grow to. */
export const DEFAULT_MEMORY_MAX_CHARS = 8_000;
/** Default bound of one `memory_add` text or `memory_replace` replacement. */
export const DEFAULT_MEMORY_MAX_ENTRY_CHARS = 2_000;
/** The most any memory file may hold, whoever writes it (an operator's PUT included). */
export const MEMORY_HARD_LIMIT_CHARS = 200_000;

/** A shared memory's name: the same rule as agent ids, so it is a safe file name. */
export const MemoryScopeNameSchema = z
  .string()
  .regex(/^[a-z0-9_-]{1,64}$/, "a memory scope uses a-z, 0-9, _ and - (at most 64)");

/**
 * Claude Code's `memory:` scopes (user, project, local): each is the agent's own memory, curated by
 * the agent, so each means `write` here (the file lives where agentd keeps memories).
 */
const CLAUDE_CODE_SCOPES = ["user", "project", "local"] as const;

const MemoryObjectSchema = z.strictObject({
  mode: MemoryModeSchema.default("write"),
  /** A memory shared by every agent that names it; default: the agent's own. */
  scope: MemoryScopeNameSchema.optional(),
  max_chars: z.number().int().min(200).max(MEMORY_HARD_LIMIT_CHARS).default(DEFAULT_MEMORY_MAX_CHARS),
  max_entry_chars: z
    .number()
    .int()
    .min(20)
    .max(MEMORY_HARD_LIMIT_CHARS)
    .default(DEFAULT_MEMORY_MAX_ENTRY_CHARS),
});

/** An agent's memory settings, with every default decided. */
export type MemorySettings = z.infer<typeof MemoryObjectSchema>;

/**
 * SPEC 10 frontmatter `memory:`: `none | read | write` (or Claude Code's `user | project | local`,
 * read as `write`), or `{ mode, scope, max_chars, max_entry_chars }`. Always the object form after parsing.
 */
export const MemoryFrontmatterSchema = z.union([
  z
    .enum([...MemoryModeSchema.options, ...CLAUDE_CODE_SCOPES])
    .transform((mode) =>
      MemoryObjectSchema.parse({ mode: mode === "none" || mode === "read" ? mode : "write" }),
    ),
  MemoryObjectSchema,
]);

/** What an agent without `memory:` has. */
export const NO_MEMORY: MemorySettings = MemoryObjectSchema.parse({ mode: "none" });

/** What `context.include` may add of each earlier run beside its result. */
export const RunContextFieldSchema = z.enum(["result", "task", "status"]);

/** SPEC 10 frontmatter `context: { last_runs: N }`: the agent's last N runs shown in its prompt. */
export const RunContextSchema = z.strictObject({
  last_runs: z.number().int().min(0).max(50).default(0),
  /** What of each run is shown; default its result only. */
  include: z.array(RunContextFieldSchema).min(1).default(["result"]),
  /** Bound of the whole section; each run gets an equal share. */
  max_chars: z.number().int().min(200).max(100_000).default(4_000),
});
export type RunContextSettings = z.infer<typeof RunContextSchema>;
