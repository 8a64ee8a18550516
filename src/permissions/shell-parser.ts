import path from "node:path";
import type { Node, Parser, Tree } from "web-tree-sitter";

export type { Node as SyntaxNode, Tree as SyntaxTree };

/**
 * The bash grammar, vendored with its licence (vendor/tree-sitter-bash/README.md says from where).
 * src/permissions, dist/permissions and the bundles in dist/cli and dist/chunks all sit two levels
 * below the package.
 */
export const BASH_GRAMMAR_FILE = path.resolve(
  import.meta.dirname,
  "../../vendor/tree-sitter-bash/tree-sitter-bash.wasm",
);

let parser: Parser | undefined;
let loading: Promise<void> | undefined;

/**
 * Loads the bash grammar of tree-sitter (the parser Codex and opencode use for the same purpose)
 * once; after that every parse is synchronous. It is a WebAssembly module that costs tens of
 * milliseconds to load, so it waits for the first `shell` call (the tool's `load`), not the start.
 */
export function loadBashParser(): Promise<void> {
  loading ??= (async () => {
    const { Language, Parser } = await import("web-tree-sitter");
    await Parser.init();
    const bash = await Language.load(BASH_GRAMMAR_FILE);
    const loaded = new Parser();
    loaded.setLanguage(bash);
    parser = loaded;
  })();
  return loading;
}

/** Whether `loadBashParser()` is done: `parseBash` works from then on. */
export function isBashParserLoaded(): boolean {
  return parser !== undefined;
}

/**
 * Parses a bash command line into a syntax tree (after `loadBashParser()`). The caller frees it with
 * `tree.delete()`.
 */
export function parseBash(text: string): Tree {
  if (!parser) throw new Error("the bash parser is not loaded: await loadBashParser() first");
  const tree = parser.parse(text);
  if (!tree) throw new Error("the bash parser returned no tree");
  return tree;
}
