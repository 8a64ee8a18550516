import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AgentFrontmatterSchema } from "../../src/definitions/agent-schema.js";
import type { EventType } from "../../src/events/agent-event.js";
import { knownKeysAt } from "../../src/schema/known-keys.js";
import { configKeyPaths } from "../support/config-key-paths.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const DOCS = path.join(ROOT, "docs");

function read(file: string): string {
  return readFileSync(path.join(ROOT, file), "utf8");
}

/** The docs pages and the README: what a user of the repository reads. */
function pages(): string[] {
  const docs = readdirSync(DOCS)
    .filter((name) => name.endsWith(".md"))
    .map((name) => path.join("docs", name));
  return ["README.md", ...docs];
}

/**
 * Every event type, written out so that a new type fails to type-check here until it is listed
 * (and then until docs/events.md has a section for it).
 */
const EVENT_TYPES = {
  status: true,
  thought: true,
  action: true,
  observation: true,
  error: true,
  warning: true,
  approval: true,
  question: true,
  hook: true,
  fallback: true,
  compaction: true,
  result: true,
  missed: true,
  skipped: true,
  audit: true,
  delivery: true,
  memory: true,
} satisfies Record<EventType, true>;

describe("the reference in docs/", () => {
  it("documents every config key, and only keys that exist", () => {
    const schemaKeys = [
      ...new Set(configKeyPaths().map(({ path: keys }) => keys.join(".").replaceAll("*", "<name>"))),
    ];
    const table = read("docs/configuration.md")
      .split("\n")
      .flatMap((line) => /^\| `([^`]+)` \|/.exec(line)?.slice(1) ?? []);
    const undocumented = schemaKeys.filter((key) => !table.includes(key));
    // A row may also introduce a group of keys, such as one entry `llm.prices.<name>` of a record.
    const unknown = table.filter((key) => !schemaKeys.some((known) => `${known}.`.startsWith(`${key}.`)));
    // A config key added to the schema needs a row in docs/configuration.md (key, default, what).
    expect({ undocumented, unknown }).toEqual({ undocumented: [], unknown: [] });
  });

  it("documents every frontmatter field of an agent file", () => {
    const text = read("docs/agent-file.md");
    const fields = knownKeysAt(AgentFrontmatterSchema, []);
    expect(fields.length).toBeGreaterThan(15);
    // A field added to the agent schema needs a row in the fields table of docs/agent-file.md.
    expect(fields.filter((field) => !text.includes(`| \`${field}\` |`))).toEqual([]);
  });

  it("has a section for every event type", () => {
    const text = read("docs/events.md");
    const missing = Object.keys(EVENT_TYPES).filter((type) => !text.includes(`### \`${type}\``));
    expect(missing).toEqual([]);
  });

  it("links only to files that exist", () => {
    const broken = pages().flatMap((page) =>
      [...read(page).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((match) => match[1] ?? "")
        .filter((target) => !/^[a-z]+:/.test(target))
        .filter((target) => !existsSync(path.resolve(ROOT, path.dirname(page), target)))
        .map((target) => `${page} → ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it("indexes every page of docs/ from docs/README.md", () => {
    const index = read("docs/README.md");
    const unlisted = readdirSync(DOCS)
      .filter((name) => name.endsWith(".md") && name !== "README.md")
      .filter((name) => !index.includes(`](${name})`));
    expect(unlisted).toEqual([]);
  });

  it("is the project's own: no page points to a document outside the repository", () => {
    const mentions = pages().filter((page) => /\bSPEC\b/.test(read(page)));
    expect(mentions).toEqual([]);
  });
});
