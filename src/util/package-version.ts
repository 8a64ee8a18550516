import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

const PackageJsonSchema = z.object({ version: z.string() });

/** agentd's version from package.json (src/ and dist/ sit at the same depth below it). */
export function packageVersion(): string {
  const file = path.resolve(import.meta.dirname, "../../package.json");
  try {
    return PackageJsonSchema.parse(JSON.parse(readFileSync(file, "utf8"))).version;
  } catch {
    return "unknown";
  }
}
