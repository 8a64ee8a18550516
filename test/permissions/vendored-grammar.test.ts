import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BASH_GRAMMAR_FILE, loadBashParser, parseBash } from "../../src/permissions/shell-parser.js";
import { daemonCodePaths } from "../../src/sandbox/definition-paths.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("the vendored bash grammar", () => {
  it("is the file vendor/tree-sitter-bash/README.md names, with its licence, and nothing installs it", () => {
    const grammar = readFileSync(BASH_GRAMMAR_FILE);
    const readme = readFileSync(path.join(ROOT, "vendor/tree-sitter-bash/README.md"), "utf8");
    const hash = createHash("sha256").update(grammar).digest("hex");
    expect(readme).toContain(hash);
    expect(readFileSync(path.join(ROOT, "vendor/tree-sitter-bash/LICENSE"), "utf8")).toContain("MIT License");
    const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      files: string[];
    };
    // The npm package brought C sources, native prebuilds and an install script for this one file.
    expect(Object.keys(manifest.dependencies)).not.toContain("tree-sitter-bash");
    expect(manifest.files).toContain("vendor");
  });

  it("is agentd's own code to the sandbox: read-only to an agent whose workdir holds the checkout", () => {
    // A rewritten grammar would change how the permission check reads every later command.
    expect(daemonCodePaths()).toContain(path.join(ROOT, "vendor"));
  });

  it("loads into web-tree-sitter and parses a command", async () => {
    await loadBashParser();
    const tree = parseBash("git status && rm -rf /tmp/x");
    try {
      expect(tree.rootNode.type).toBe("program");
      expect(tree.rootNode.hasError).toBe(false);
      expect(tree.rootNode.descendantsOfType("command")).toHaveLength(2);
    } finally {
      tree.delete();
    }
  });
});
