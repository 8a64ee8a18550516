import path from "node:path";
import { AgentdError } from "../errors/agentd-error.js";
import { AGENT_ID_PATTERN } from "./agent-schema.js";

/**
 * SPEC 1: an agent's id is its file's base name without `.md`, wherever the file sits in agents/.
 * A dot between two name characters becomes `-` (`code.reviewer.md` is `code-reviewer`): opencode
 * and Claude Code allow dots, but an id also names the agent's tool for a model, which takes none.
 */
export function agentIdOf(file: string): string {
  return fileStemOf(file).replace(/(?<=[A-Za-z0-9_-])\.(?=[A-Za-z0-9_-])/g, "-");
}

/** The file's base name without `.md`, as written. */
export function fileStemOf(file: string): string {
  // path.basename(file, ".md"), spelled out: `agentd run` takes the id of every file in the folders.
  const name = file.slice(file.lastIndexOf(path.sep) + 1);
  return name.endsWith(".md") && name !== ".md" ? name.slice(0, -".md".length) : name;
}

/** A note for a file whose id is not its name as written (dots became `-`), else undefined. */
export function agentIdNote(file: string): string | undefined {
  const stem = fileStemOf(file);
  const id = agentIdOf(file);
  if (stem === id || !AGENT_ID_PATTERN.test(id)) return undefined;
  return `the file name "${stem}" has dots: its agent id is "${id}" (dots become -)`;
}

/** The error for a file whose name cannot be an agent id, or undefined when the name is fine. */
export function checkAgentId(file: string): AgentdError | undefined {
  const id = agentIdOf(file);
  if (AGENT_ID_PATTERN.test(id)) return undefined;
  const suggestion = id
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return new AgentdError(
    "DEFINITION_INVALID",
    `"${id}" is not a valid agent id: use lowercase letters, digits, - and _`,
    {
      file,
      hint: suggestion
        ? `rename the file to ${suggestion}.md`
        : "rename the file, for example to my-agent.md",
    },
  );
}
