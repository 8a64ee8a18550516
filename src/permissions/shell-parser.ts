import { createRequire } from "node:module";
import { Language, type Node, Parser, type Tree } from "web-tree-sitter";

export type { Node as SyntaxNode, Tree as SyntaxTree };

const require = createRequire(import.meta.url);

/**
 * The bash grammar of tree-sitter (the parser Codex and opencode use for the same purpose), loaded
 * once when this module is first imported; after that every parse is synchronous.
 */
await Parser.init();
const bash = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
const parser = new Parser();
parser.setLanguage(bash);

/** Parses a bash command line into a syntax tree. The caller frees it with `tree.delete()`. */
export function parseBash(text: string): Tree {
  const tree = parser.parse(text);
  if (!tree) throw new Error("the bash parser returned no tree");
  return tree;
}
