import { writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Writes hooks that append every module a Node process loads from a file to `traceFile`, and
 * returns the file to start that process with (`node --import <it>`): ES modules imported (the
 * hook of module.register) and CommonJS modules required (Module._load: what a bundle or an ES
 * module requires from node_modules, and what those require in turn).
 */
export function writeModuleTracer(directory: string, traceFile: string): string {
  const hooks = path.join(directory, "trace-hooks.mjs");
  writeFileSync(
    hooks,
    `import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(traceFile)}, url + "\\n");
  return next(url, context);
}
`,
  );
  const register = path.join(directory, "trace-register.mjs");
  writeFileSync(
    register,
    `import { appendFileSync } from "node:fs";
import Module, { register } from "node:module";
register(${JSON.stringify(`file://${hooks}`)});
const load = Module._load;
Module._load = function (request, parent, isMain) {
  try { appendFileSync(${JSON.stringify(traceFile)}, Module._resolveFilename(request, parent, isMain) + "\\n"); } catch {}
  return load.apply(this, arguments);
};
`,
  );
  return register;
}
