import path from "node:path";
import { AgentdError } from "../errors/agentd-error.js";
import { AGENT_ID_PATTERN } from "./agent-schema.js";

/** SPEC 1: an agent's id is its file's base name without `.md`, wherever the file sits in agents/. */
export function agentIdOf(file: string): string {
  // path.basename(file, ".md"), spelled out: `agentd run` takes the id of every file in the folders.
  const name = file.slice(file.lastIndexOf(path.sep) + 1);
  return name.endsWith(".md") && name !== ".md" ? name.slice(0, -".md".length) : name;
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
