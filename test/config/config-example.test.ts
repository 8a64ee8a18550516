import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { loadConfig } from "../../src/config/load-config.js";
import { configKeyPaths } from "../support/config-key-paths.js";

const EXAMPLE = path.resolve(import.meta.dirname, "../../config.example.yaml");

function valueAt(value: unknown, keys: readonly string[]): unknown {
  return keys.reduce<unknown>(
    (current, key) =>
      current !== null && typeof current === "object" ? (current as Record<string, unknown>)[key] : undefined,
    value,
  );
}

describe("config.example.yaml", () => {
  const text = readFileSync(EXAMPLE, "utf8");
  const raw: unknown = parse(text);

  it("loads with loadConfig, without warnings", () => {
    const loaded = loadConfig({ file: EXAMPLE, environment: {} });
    expect(loaded.file).toBe(EXAMPLE);
    expect(loaded.warnings).toEqual([]);
  });

  it("shows the defaults: it parses to exactly the configuration of an empty file", () => {
    expect(ConfigSchema.parse(raw)).toEqual(ConfigSchema.parse({}));
  });

  it("documents every key of the config schema", () => {
    const paths = configKeyPaths();
    expect(paths.length).toBeGreaterThan(50);
    const missing = paths.filter(({ path: keys, hasDefault }) => {
      const last = keys.at(-1) ?? "";
      // Keys with a default are set to it; optional keys and record entries are shown commented out.
      if (hasDefault && !keys.includes("*")) return valueAt(raw, keys) === undefined;
      return !new RegExp(`^\\s*#.*\\b${last}:`, "m").test(text) && valueAt(raw, keys) === undefined;
    });
    expect(missing.map(({ path: keys }) => keys.join("."))).toEqual([]);
  });

  it("introduces every top-level key with a comment on the line above", () => {
    const lines = text.split("\n");
    const bare = lines.filter((line, index) => /^[a-z_]+:/.test(line) && !lines[index - 1]?.startsWith("#"));
    expect(bare).toEqual([]);
  });
});
