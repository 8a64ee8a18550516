import { AgentdError } from "../errors/agentd-error.js";
import { type LocatedYaml, parseLocatedYaml } from "../schema/yaml-document.js";

/** An agent file cut into its YAML frontmatter (parsed, with lines) and its Markdown body. */
export interface SplitAgentFile {
  /** The frontmatter's parsed value: `{}` for an empty block. */
  data: unknown;
  /** Lines in the .md file of the frontmatter's keys. */
  lineOf: LocatedYaml["lineOf"];
  body: string;
}

const FRONTMATTER_EXAMPLE =
  "start the file with a line ---, then `description: …`, then a line --- and the instructions";

/**
 * Splits an agent file into its frontmatter and body, parsing the frontmatter with the `yaml` package
 * (YAML 1.2, the same parser as config and presets). Throws DEFINITION_INVALID, with the line in the .md file,
 * for a missing or unclosed frontmatter and for a YAML syntax error.
 */
export function splitFrontmatter(file: string, original: string): SplitAgentFile {
  // Windows line endings would leave a \r on the last frontmatter line; lines do not move.
  const text = original.replace(/\r\n/g, "\n");
  if (text.trim() === "") {
    throw new AgentdError("DEFINITION_INVALID", "the file is empty", {
      file,
      line: 1,
      hint: `an agent file needs frontmatter with at least a description: ${FRONTMATTER_EXAMPLE}`,
    });
  }
  if (!/^---(?!-)[^\n]*\n/.test(text)) {
    throw new AgentdError("DEFINITION_INVALID", "the file has no frontmatter", {
      file,
      line: 1,
      hint: FRONTMATTER_EXAMPLE,
    });
  }
  if (!/\n---[^\S\n]*(\n|$)/.test(text.slice(3))) {
    throw new AgentdError("DEFINITION_INVALID", "the frontmatter is not closed", {
      file,
      line: 1,
      hint: "add a line --- after the frontmatter, before the instructions",
    });
  }
  const { language, block, body } = cutFrontmatter(text);
  if (language !== "yaml") {
    throw new AgentdError("DEFINITION_INVALID", `frontmatter in "${language}" is not supported`, {
      file,
      line: 1,
      hint: "write the frontmatter in YAML: the first line is just ---",
    });
  }
  if (block === undefined) return { data: {}, lineOf: () => undefined, body };
  // The block starts right after the opening `---`, on line 1 of the file, so its line numbers
  // are already the file's.
  const located = parseLocatedYaml(block);
  if (located.syntaxError) {
    throw new AgentdError("DEFINITION_INVALID", `invalid YAML: ${located.syntaxError.message}`, {
      file,
      line: located.syntaxError.line,
      hint: "fix the YAML syntax on that line (quote values that contain `: ` or start with a special character)",
    });
  }
  return { data: located.value ?? {}, lineOf: lazyLineOf(block), body };
}

/**
 * Lines of the frontmatter of an agent file whose frontmatter is known to be valid (a file read
 * again unchanged), cut and parsed only the first time a line is asked for: a restart that takes
 * 1,000 agents from the parse cache cuts none of them.
 */
export function frontmatterLines(original: string): LocatedYaml["lineOf"] {
  let lineOf: LocatedYaml["lineOf"] | undefined;
  return (path) => {
    if (!lineOf) {
      const { block } = cutFrontmatter(original.replace(/\r\n/g, "\n"));
      lineOf = block === undefined ? () => undefined : lazyLineOf(block);
    }
    return lineOf(path);
  };
}

/**
 * Lines are needed only for errors and warnings: rather than keep every agent's parsed YAML
 * document in memory, the block is parsed again the first time a line is asked for.
 */
function lazyLineOf(block: string): LocatedYaml["lineOf"] {
  let located: LocatedYaml | undefined;
  return (path) => {
    located ??= parseLocatedYaml(block);
    return located.lineOf(path);
  };
}

/**
 * Cuts a file that starts with `---` the way gray-matter cut it before (agent files written for it,
 * Claude Code's and opencode's too, cut the same): an optional language after the opening `---`,
 * the block up to the first line that starts with `---` (undefined when it holds nothing but blank
 * and comment lines), and the body after that line. Parsing the block is the caller's, with `yaml`:
 * one YAML parser, and no library loaded for a cut.
 */
function cutFrontmatter(text: string): { language: string; block: string | undefined; body: string } {
  const afterOpening = text.replace(/^\uFEFF/, "").slice("---".length);
  const firstLine = afterOpening.slice(0, afterOpening.search(/\r?\n/));
  const language = firstLine.trim() || "yaml";
  const rest = afterOpening.slice(firstLine.trim() ? firstLine.length : 0);
  const closing = rest.indexOf("\n---");
  const matter = closing === -1 ? rest : rest.slice(0, closing);
  const body = closing === -1 ? "" : rest.slice(closing + "\n---".length).replace(/^\r?\n?/, "");
  const block = matter.replace(/^\s*#[^\n]+/gm, "").trim() === "" ? undefined : matter;
  return { language, block, body };
}
