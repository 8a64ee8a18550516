import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import path from "node:path";
import vm from "node:vm";

/**
 * The process event that writes the caches still to be written at once. An event, not a function
 * of this module: the bundle that asks for it holds its own copy of this module, not the one that
 * loaded the bundle.
 */
const WRITE_CODE_CACHE_NOW = "agentd:write-code-cache-now";

/**
 * Writes now the code cache of the bundle this process runs, when it had none (or V8 refused it),
 * instead of at exit: for a daemon, once it is up, as a supervisor or a test may end it by SIGKILL.
 */
export function writeCodeCacheNow(): void {
  (process as NodeJS.EventEmitter).emit(WRITE_CODE_CACHE_NOW);
}

type ModuleWrapper = (
  exports: unknown,
  require: NodeJS.Require,
  module: { exports: unknown },
  filename: string,
  dirname: string,
) => void;

/**
 * Runs a CommonJS bundle as `require` would, with V8's code cache: Node 20 compiles every module
 * from its source on every start (`module.enableCompileCache` came with Node 22), and compiling was
 * a large part of `agentd run`'s way to its first model request. The compiled code is kept in
 * `<file>.cache`, written as the process exits when there was none or V8 refused it (a new build,
 * another Node, other V8 flags); where agentd may not write (an installation of another user),
 * there is simply no cache. V8 checks the cache against the source it is given. The bundle must
 * not call import() (Node 20 lets a script compiled this way do so only behind an experimental
 * flag or with a warning): it is built with its dynamic imports turned into require().
 * A bundle that answers several commands keeps one cache a kind of command (`cacheFile`): the
 * cache holds the functions the first process ran, and a daemon runs others than `validate` does.
 * Returns the bundle's exports, or undefined when there is no bundle (only tsc's output is built).
 */
export function loadWithCodeCache(file: string, cacheFile = `${file}.cache`): unknown {
  let source: string;
  try {
    // The bundle is ASCII (scripts/bundle-cli.mjs escapes the rest): Latin-1 copies its bytes
    // as they are, where UTF-8 would decode two megabytes.
    source = readFileSync(file, "latin1");
  } catch {
    return undefined;
  }
  let cachedData: Buffer | undefined;
  try {
    // V8 checks a cache against its source's length only: one older than the bundle (a bundle
    // replaced in place by one of the same length) would run the old bundle's compiled code.
    if (statSync(cacheFile).mtimeMs >= statSync(file).mtimeMs) cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  });
  // Written at exit, so the functions the command ran are in it too, not only the top level; or
  // earlier, when the command says so (a daemon is often ended by SIGKILL, with no exit).
  if (cachedData === undefined || script.cachedDataRejected === true) {
    let written = false;
    const write = (): void => {
      if (written) return;
      written = true;
      writeCodeCache(cacheFile, script);
    };
    process.once("exit", write);
    process.once(WRITE_CODE_CACHE_NOW, write);
  }
  const module = { exports: {} as unknown };
  const wrapper = script.runInThisContext() as ModuleWrapper;
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file));
  return module.exports;
}

function writeCodeCache(cacheFile: string, script: vm.Script): void {
  const temporary = `${cacheFile}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, script.createCachedData());
    renameSync(temporary, cacheFile);
  } catch {
    // A folder this process may not write to: the next start compiles again, as without a cache.
    // Nothing here may throw: the process is exiting, with the code its command set.
    try {
      rmSync(temporary, { force: true });
    } catch {
      // no temporary file was made
    }
  }
}
