// `npm start` runs this first, and npm's `prepare` is this too (npm runs `prepare` after `npm install`
// in the clone, before `npm pack`, and when `npx agentd` in a clone installs the folder into npx's
// cache): it builds only when dist/ is missing or older than a source file, so none of them pays for
// a compile it does not need.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const builtEntry = path.join(root, "dist", "cli", "main.js");
const inputs = [
  "src",
  "tsconfig.json",
  "tsconfig.build.json",
  "tsconfig.web.json",
  "package.json",
  "scripts/bundle-cli.mjs",
  "scripts/copy-dashboard-files.mjs",
];

/** The newest modification time of a file or of any file under a folder. */
function newest(file) {
  const stats = statSync(file, { throwIfNoEntry: false });
  if (!stats) return 0;
  if (!stats.isDirectory()) return stats.mtimeMs;
  return readdirSync(file).reduce((latest, name) => Math.max(latest, newest(path.join(file, name))), 0);
}

const built = statSync(builtEntry, { throwIfNoEntry: false })?.mtimeMs ?? 0;
const source = Math.max(...inputs.map((input) => newest(path.join(root, input))));
if (built >= source) process.exit(0);
console.error(
  built === 0 ? "building dist/ (first start)…" : "sources changed since the last build: rebuilding dist/…",
);
const build = spawnSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
process.exit(build.status ?? 1);
