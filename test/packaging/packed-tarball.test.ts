import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startDaemonProcess } from "../support/daemon-process.js";
import { packTarballInto } from "../support/packed-tarball.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

const { version } = z
  .object({ version: z.string() })
  .parse(JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")));

/**
 * What a user gets from npm: the tarball `npm pack` makes of this repository (from the dist/ that
 * `npm test` built), unpacked, run from its own files only.
 */
describe("the packed npm tarball", { timeout: 240_000 }, () => {
  let folder: string;
  let files: string[] = [];
  let application: string;

  beforeAll(async () => {
    folder = mkdtempSync(path.join(tmpdir(), "agentd-pack-"));
    const tarball = await packTarballInto(folder);
    files = tarball.files.map((file) => file.path);
    // Unpacked as npm would (package/ → the package's folder), with this repository's dependencies:
    // the same package.json and lock, so the same tree npm would install, without a network.
    await execa("tar", ["-xzf", path.join(folder, tarball.filename), "-C", folder]);
    application = path.join(folder, "package");
    symlinkSync(path.join(ROOT, "node_modules"), path.join(application, "node_modules"));
  }, 240_000);

  afterAll(() => {
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it("carries the program, the docs, the licence and the examples, and no sources or tests", () => {
    for (const expected of [
      "LICENSE",
      "README.md",
      "docs/cli.md",
      "bin/agentd.js",
      "dist/cli/main.js",
      "config.example.yaml",
      // The shell grammar of the permission check, with its licence (no tree-sitter-bash package).
      "vendor/tree-sitter-bash/tree-sitter-bash.wasm",
      "vendor/tree-sitter-bash/LICENSE",
    ])
      expect(files).toContain(expected);
    expect(files.some((file) => file.startsWith("agents/") && file.endsWith(".md"))).toBe(true);
    expect(files.some((file) => file.startsWith("presets/"))).toBe(true);
    expect(files.filter((file) => file.startsWith("src/") || file.startsWith("test/"))).toEqual([]);
  });

  it("answers `agentd --version` with the package's version", async () => {
    const answered = await execa(process.execPath, [path.join(application, "bin", "agentd.js"), "--version"]);
    expect(answered.stdout.trim()).toBe(version);
  });

  it("starts with its example agents and answers /health", async () => {
    const examples = path.join(application, "agents");
    const config = path.join(folder, "config.yaml");
    writeFileSync(
      config,
      [
        `agents_dir: ${JSON.stringify(examples)}`,
        "data_dir: ./data",
        "server: { host: 127.0.0.1, port: 0 }",
        // No model answers here: the daemon still starts and says so.
        "llm: { base_url: 'http://127.0.0.1:9/v1', model: none }",
        "",
      ].join("\n"),
    );
    const daemon = await startDaemonProcess({
      configFile: config,
      main: path.join(application, "dist", "cli", "main.js"),
    });
    try {
      const health = await daemon.request("GET", "/health");
      expect(health.status).toBe(200);
      const agents = await daemon.request("GET", "/agents");
      const listed = z.object({ agents: z.array(z.object({ id: z.string() })) }).parse(agents.body).agents;
      expect(listed.length).toBeGreaterThan(0);
    } finally {
      await daemon.kill();
    }
  });
});
