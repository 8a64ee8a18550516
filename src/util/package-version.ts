import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

const PackageJsonSchema = z.object({ name: z.string(), version: z.string() });

/**
 * agentd's version from its package.json: the nearest one named `agentd` above this module, which
 * sits in src/util/ when run from source, in dist/util/ when compiled and in dist/chunks/ when
 * bundled.
 */
export function packageVersion(): string {
  for (let folder = import.meta.dirname; ; folder = path.dirname(folder)) {
    try {
      const found = PackageJsonSchema.parse(
        JSON.parse(readFileSync(path.join(folder, "package.json"), "utf8")),
      );
      if (found.name === "agentd") return found.version;
    } catch {
      // No readable package.json here: look one folder up.
    }
    if (path.dirname(folder) === folder) return "unknown";
  }
}
