import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AgentFrontmatterSchema } from "../../src/definitions/agent-schema.js";
import { configKeyPaths, schemaKeyPaths } from "../support/config-key-paths.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** README.md and every page of docs/, by their path from the repository's root. */
function pages(): string[] {
  const docs = readdirSync(path.join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => path.join("docs", name));
  return ["README.md", ...docs];
}

function read(file: string): string {
  return readFileSync(path.join(ROOT, file), "utf8");
}

/**
 * Names in backticks that start like a config key and are something else: file names in a data
 * folder (`vault.json`), and fields of an API answer (`/health`'s `store.error`).
 */
const NOT_KEYS = /\.(json|jsonl|key|token|ya?ml|md|[cm]?js|ts)$/;
const ANSWER_FIELDS = new Set(["store.error"]);
/** Span attributes of the OpenTelemetry conventions that docs/telemetry.md lists: not config keys. */
const SPAN_ATTRIBUTES = new Set(["server.address", "server.port"]);

/**
 * Whether a dotted key written in the docs (`<name>` for a free key) is a path of `schemaPaths`,
 * or the start of one (`llm.prices.<name>` introduces the entries of a record).
 */
function isKnownKey(key: string, schemaPaths: readonly string[][]): boolean {
  const segments = key.split(".");
  return schemaPaths.some(
    (schemaPath) =>
      schemaPath.length >= segments.length &&
      segments.every((written, index) => schemaPath[index] === "*" || schemaPath[index] === written),
  );
}

describe("the keys the docs name", () => {
  it("are config keys (or an agent file's keys) that validate", () => {
    const config = configKeyPaths().map(({ path: keys }) => keys);
    const agent = schemaKeyPaths(AgentFrontmatterSchema).map(({ path: keys }) => keys);
    const topLevel = new Set(config.map((keys) => keys[0]));
    const named = pages().flatMap((page) =>
      [...read(page).matchAll(/`([a-z_]+(?:\.(?:[A-Za-z0-9_-]+|<[a-z_ ]+>|\*))+)`/g)]
        .map((match) => match[1] ?? "")
        .filter(
          (key) =>
            topLevel.has(key.split(".")[0]) &&
            !NOT_KEYS.test(key) &&
            !ANSWER_FIELDS.has(key) &&
            !SPAN_ATTRIBUTES.has(key),
        )
        .map((key) => ({ page, key })),
    );
    expect(named.length).toBeGreaterThan(50);
    const unknown = named
      .filter(({ key }) => !isKnownKey(key, config) && !isKnownKey(key, agent))
      .map(({ page, key }) => `${page}: ${key}`);
    // A key in backticks that starts like a config key must exist: `llm.compaction.max_tokens`
    // once sent readers to a key that fails validation (it is `llm.context.max_tokens`).
    expect(unknown).toEqual([]);
  });
});

describe("the curl examples of the docs", () => {
  it("carry the API token, which every request but /health needs", () => {
    const missing = pages().flatMap((page) =>
      read(page)
        .split("\n")
        .filter((line) => /^\s*curl\s/.test(line) && /localhost|127\.0\.0\.1/.test(line))
        .filter((line) => !/\/health\b/.test(line) && !/Authorization|\$AUTH\b/.test(line))
        .map((line) => `${page}: ${line.trim()}`),
    );
    expect(missing).toEqual([]);
  });
});
