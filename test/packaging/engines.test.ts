import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
// semver is npm's own reading of `engines` (a dependency of the toolchain, loaded untyped here).
const semver = createRequire(import.meta.url)("semver") as {
  satisfies(version: string, range: string): boolean;
};

interface LockedPackage {
  version?: string;
  engines?: { node?: string } | string[];
}

describe("npm install on Node 20", () => {
  it("locks no package whose engines leave out the Node versions agentd supports (no EBADENGINE)", () => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      engines: { node: string };
    };
    const lock = JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, LockedPackage>;
    };
    // The oldest Node agentd declares, and the newest 20.x: npm warns when either is left out.
    const nodes = ["20.19.0", "20.99.0"].filter((version) =>
      semver.satisfies(version, manifest.engines.node),
    );
    expect(nodes).toHaveLength(2);
    const refused = Object.entries(lock.packages).flatMap(([where, locked]) => {
      const range = Array.isArray(locked.engines) ? undefined : locked.engines?.node;
      if (where === "" || range === undefined) return [];
      return nodes
        .filter((node) => !semver.satisfies(node, range))
        .map((node) => `${where}@${locked.version ?? "?"} wants node ${range}, not ${node}`);
    });
    // A new dependency that needs Node 22 is an EBADENGINE warning on every install: pin the one
    // below it (package.json "overrides") or choose another package.
    expect(refused).toEqual([]);
  });
});
