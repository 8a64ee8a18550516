import path from "node:path";
import ts from "typescript";

const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * Type-checks `files` (and what they import) with this repository's own compiler options — strict,
 * `noUncheckedIndexedAccess` — as a user's project would, and answers every error as
 * `file(line,col): message`. Files outside the repository resolve their packages from a
 * `node_modules` next to them.
 */
export function typeErrors(files: readonly string[]): string[] {
  const read = ts.readConfigFile(path.join(ROOT, "tsconfig.json"), (file) => ts.sys.readFile(file));
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, "\n"));
  const { options } = ts.parseJsonConfigFileContent(read.config, ts.sys, ROOT);
  const program = ts.createProgram(files, {
    ...options,
    noEmit: true,
    types: [],
    rootDir: undefined,
    outDir: undefined,
    sourceMap: false,
  });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    if (diagnostic.file === undefined || diagnostic.start === undefined) return message;
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${path.basename(diagnostic.file.fileName)}(${line + 1},${character + 1}): ${message}`;
  });
}

/** The JavaScript of a TypeScript module, its types erased (no check: see {@link typeErrors}). */
export function transpiled(source: string): string {
  return ts.transpileModule(source, {
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
    },
  }).outputText;
}
