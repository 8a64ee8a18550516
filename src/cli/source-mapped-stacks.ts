import { readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import path from "node:path";

/**
 * Makes stack traces name the `src/` file and line of a frame in `bundle` (a command bundle run
 * through code-cache.ts), from the map beside it (`<bundle>.map`). Node 20 maps the frames of
 * modules it loads itself when source maps are on, but not those of a script compiled with
 * `vm.Script`, which is how the bundles keep their code cache. The map is read at the first stack
 * trace formatted, not at the start (it is megabytes of JSON); frames of other files, and every
 * frame when the map is missing, are written as V8 writes them.
 */
export function mapStackTracesOf(bundle: string): void {
  let sourceMap: SourceMap | null | undefined;
  const mapOfBundle = (): SourceMap | null => {
    if (sourceMap === undefined) {
      try {
        sourceMap = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, "utf8")) as never);
      } catch {
        sourceMap = null;
      }
    }
    return sourceMap;
  };
  Error.prepareStackTrace = (error: Error, frames: NodeJS.CallSite[]): string => {
    const lines = frames.map((frame) => `\n    at ${mappedFrame(frame, bundle, mapOfBundle)}`);
    return `${errorHeader(error)}${lines.join("")}`;
  };
}

function mappedFrame(frame: NodeJS.CallSite, bundle: string, mapOfBundle: () => SourceMap | null): string {
  const written = String(frame);
  const line = frame.getLineNumber();
  const column = frame.getColumnNumber();
  if (frame.getFileName() !== bundle || line === null || column === null) return written;
  const entry = mapOfBundle()?.findEntry(line - 1, column - 1) as
    { originalSource?: string; originalLine?: number; originalColumn?: number } | undefined;
  if (entry?.originalSource === undefined || entry.originalLine === undefined) return written;
  const source = path.resolve(path.dirname(bundle), entry.originalSource);
  const original = `${source}:${entry.originalLine + 1}:${(entry.originalColumn ?? 0) + 1}`;
  return written.replace(`${bundle}:${line}:${column}`, original);
}

/** The first line of a stack, as V8 writes it: `Name: message` (Error.prototype.toString). */
function errorHeader(error: Error): string {
  try {
    return Error.prototype.toString.call(error);
  } catch {
    return "<error>";
  }
}
