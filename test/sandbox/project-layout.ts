import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { SandboxHost } from "../../src/sandbox/sandbox-host.js";
import type { SandboxProject } from "./sandbox-project.js";

export const ORIGINAL = "original-definition-0c4e";
export const SECRET = "dotenv-secret-6b1d";

/**
 * The README's layout with the agent working on the project itself (`workdir: .`): config, `.env`
 * files, agents, presets, a hook script and an MCP server with a module it imports in the project;
 * a foreign agents folder in the home's `.claude/agents`, loaded through `agents_dirs`. `files` are
 * written under the project too.
 */
export function projectLayout(project: SandboxProject, files: Record<string, string> = {}) {
  const root = project.root;
  const all: Record<string, string> = {
    "config.yaml": `# ${ORIGINAL}\n`,
    ".env": `OPENAI_API_KEY=${SECRET}\n`,
    ".env.local": `OTHER=${SECRET}\n`,
    "agents/me.md": `---\ndescription: ${ORIGINAL}\n---\nHi\n`,
    "presets/reviewer.yaml": `name: reviewer\n# ${ORIGINAL}\n`,
    "tools/hooks/gate.sh": `#!/bin/sh\n# ${ORIGINAL}\nexit 0\n`,
    "tools/mcp/server.js": `// ${ORIGINAL}\nimport "./lib.js";\n`,
    "tools/mcp/lib.js": `// ${ORIGINAL}\n`,
    "home/.claude/agents/helper.md": `---\ndescription: ${ORIGINAL}\n---\nHi\n`,
    ...files,
  };
  for (const [file, content] of Object.entries(all)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
  }
  const defaults = ConfigSchema.parse({});
  const config = {
    ...defaults,
    data_dir: project.dataDirectory,
    agents_dir: path.join(root, "agents"),
    agents_dirs: [path.join(project.home, ".claude", "agents")],
    presets_dir: path.join(root, "presets"),
    mcp_servers: {
      local: { command: "node", args: [path.join(root, "tools/mcp/server.js")], env: {} },
    },
  };
  const host = new SandboxHost({
    config,
    configFile: path.join(root, "config.yaml"),
    environment: { ...process.env, HOME: project.home },
  });
  return { host, root, config };
}
