import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DefinitionRegistry } from "../../src/definitions/definition-registry.js";
import { waitFor } from "../support/wait-for.js";
import { agentText, createTempProject, type TempProject } from "../support/temp-project.js";

let project: TempProject;
let cacheFile: string;
beforeEach(() => {
  project = createTempProject();
  cacheFile = path.join(project.config.data_dir, "cache", "agents.json");
});
afterEach(() => project.remove());

/** Starts a registry on the project as the daemon does (with the cache), returns its snapshot, closes it. */
async function load() {
  const registry = await DefinitionRegistry.start(project.config, { watch: false, cache: true });
  await registry.close();
  return registry.snapshot();
}

/** The cache as written by the last start (its write is off the start's path). */
async function writtenCache(): Promise<{
  identity: string;
  agents: Record<string, Record<string, unknown>>;
}> {
  const text = await waitFor(
    () => existsSync(cacheFile) && readFileSync(cacheFile, "utf8"),
    "the cache file",
  );
  return JSON.parse(text) as { identity: string; agents: Record<string, Record<string, unknown>> };
}

/** Rewrites one cached entry, so a start that uses the entry shows it. */
async function tamperWith(file: string, instructions: string, identity?: string): Promise<void> {
  const cache = await writtenCache();
  const entry = cache.agents[file];
  if (!entry) throw new Error(`no cache entry for ${file}`);
  entry["instructions"] = instructions;
  writeFileSync(cacheFile, JSON.stringify({ ...cache, identity: identity ?? cache.identity }));
}

describe("the parsed agents' cache in data_dir", () => {
  it("gives a restart the agents it parsed before, for files whose bytes did not change", async () => {
    const file = project.writeAgent("writer.md", agentText("Writes", "", "Write well."));
    expect((await load()).get("writer")?.instructions).toBe("Write well.\n");
    await tamperWith(file, "from the cache");
    expect((await load()).get("writer")?.instructions).toBe("from the cache");
  });

  it("parses a file again when its bytes changed, even with the same size and modification time", async () => {
    const file = project.writeAgent("writer.md", agentText("Writes", "", "Write well."));
    await load();
    await tamperWith(file, "stale");
    const { mtime, size } = statSync(file);
    writeFileSync(file, agentText("Writes", "", "Write fast."));
    utimesSync(file, mtime, mtime);
    expect(statSync(file).size).toBe(size);
    const definition = (await load()).get("writer");
    expect(definition?.instructions).toBe("Write fast.\n");
  });

  it("never keeps a file with errors, so its errors are reported afresh on every start", async () => {
    const broken = project.writeAgent("broken.md", "---\ndescription: [unclosed\n---\nBody\n");
    project.writeAgent("fine.md", agentText("Fine"));
    const first = await load();
    const cache = await writtenCache();
    expect(Object.keys(cache.agents)).not.toContain(broken);
    const second = await load();
    const status = (snapshot: typeof first) => snapshot.agents.find((agent) => agent.id === "broken");
    expect(status(second)?.valid).toBe(false);
    expect(status(second)?.errors.map((error) => error.describe())).toEqual(
      status(first)?.errors.map((error) => error.describe()),
    );
  });

  it("places a warning's line from the file when the file came from the cache", async () => {
    project.writeAgent("writer.md", agentText("Writes", "capabilities: read-only\ntools: [shell]\n"));
    const warnings = (await load()).get("writer")?.warnings;
    expect(warnings?.some((warning) => /writer\.md:\d+ tools: capabilities/.test(warning))).toBe(true);
    expect((await load()).get("writer")?.warnings).toEqual(warnings);
  });

  it("ignores a cache written by another build, and a damaged one", async () => {
    const file = project.writeAgent("writer.md", agentText("Writes", "", "Write well."));
    await load();
    await tamperWith(file, "from another build", "0.0.0@1");
    expect((await load()).get("writer")?.instructions).toBe("Write well.\n");
    writeFileSync(cacheFile, "{ not json");
    expect((await load()).get("writer")?.instructions).toBe("Write well.\n");
  });
});
