// Part of `npm run build`: the dashboard's page and styles sit beside its TypeScript in
// src/dashboard/web; tsc compiles the scripts, this copies the rest into dist/dashboard/web.
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const source = path.join(root, "src", "dashboard", "web");
const target = path.join(root, "dist", "dashboard", "web");
mkdirSync(target, { recursive: true });
for (const file of readdirSync(source)) {
  if (/\.(html|css|svg)$/.test(file)) copyFileSync(path.join(source, file), path.join(target, file));
}
