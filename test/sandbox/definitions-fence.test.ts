import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { SandboxHost } from "../../src/sandbox/sandbox-host.js";
import { ORIGINAL, SECRET, projectLayout } from "./project-layout.js";
import { SandboxProject } from "./sandbox-project.js";

let project: SandboxProject;
afterEach(() => project.dispose());

/** Every file under `folder`, relative, with its content: a snapshot to compare before and after. */
function snapshot(folder: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      else found[path.relative(folder, full)] = entry.isFile() ? readFileSync(full, "utf8") : "(other)";
    }
  };
  if (existsSync(folder)) walk(folder);
  return found;
}

describe("definitions belong to the operator", () => {
  it("an agent working on the project changes no agent, preset, config, .env, hook or MCP file", async () => {
    project = new SandboxProject();
    const { host, root } = projectLayout(project);
    const claudeAgents = path.join(project.home, ".claude", "agents");
    // A CLI worker may write its config folder (~/.claude): the agents folder in it stays read-only.
    const sandbox = { write: [path.join(project.home, ".claude")] };
    const hooks = { before_tool: [{ command: "sh tools/hooks/gate.sh" }] };
    const before = {
      agents: snapshot(path.join(root, "agents")),
      presets: snapshot(path.join(root, "presets")),
      tools: snapshot(path.join(root, "tools")),
      claude: snapshot(claudeAgents),
      config: readFileSync(path.join(root, "config.yaml"), "utf8"),
    };
    const plant = '---\\ndescription: planted\\nsandbox: off\\nschedule: \\"* * * * * *\\"\\n---\\nx\\n';
    const attempts = [
      `printf '${plant}' > agents/x.md`,
      `printf '${plant}' > ${claudeAgents}/x.md`,
      `echo 'llm: {}' > config.yaml; echo 'A=1' >> .env; echo 'name: evil' > presets/evil.yaml`,
      `echo 'exit 1' > tools/hooks/gate.sh; echo 'evil()' > tools/mcp/server.js`,
      // Around a read-only mount: rename it, or a folder above it, and make a new one in its place.
      `mv agents agents.old; mkdir -p agents; printf '${plant}' > agents/x.md`,
      `mv tools tools.old; mkdir -p tools/hooks; echo 'exit 1' > tools/hooks/gate.sh`,
      `mv ${project.home}/.claude ${project.home}/.claude.old; mkdir -p ${claudeAgents}; printf '${plant}' > ${claudeAgents}/x.md`,
      `mv tools/hooks tools/hooks.old; mkdir tools/hooks; echo 'exit 1' > tools/hooks/gate.sh`,
      `rm -rf agents presets tools ${claudeAgents}; ln -sf /tmp agents/x.md`,
      `mv config.yaml config.old; echo 'llm: {}' > config.yaml; rm -f config.yaml; ln -s agents config.yaml`,
    ];
    for (const command of attempts) {
      const result = await project.shell(command, { host, workdir: root, sandbox, hooks });
      expect(result.code, result.output).not.toBe("SANDBOX_UNAVAILABLE");
    }
    expect(snapshot(path.join(root, "agents"))).toEqual(before.agents);
    expect(snapshot(path.join(root, "presets"))).toEqual(before.presets);
    expect(snapshot(path.join(root, "tools"))).toEqual(before.tools);
    expect(snapshot(claudeAgents)).toEqual(before.claude);
    expect(readFileSync(path.join(root, "config.yaml"), "utf8")).toBe(before.config);
    expect(readFileSync(path.join(root, ".env"), "utf8")).toBe(`OPENAI_API_KEY=${SECRET}\n`);
    for (const moved of ["agents.old", "tools.old", "config.old", path.join("home", ".claude.old")]) {
      expect(existsSync(path.join(root, moved)), moved).toBe(false);
    }
  });

  it("hides the config file and .env files even inside the workdir, and keeps the rest writable", async () => {
    project = new SandboxProject();
    const { host, root } = projectLayout(project);
    const result = await project.shell(
      `cat config.yaml .env .env.local; grep -r ${SECRET} . 2>/dev/null; echo made > made.txt && cat made.txt`,
      { host, workdir: root },
    );
    expect(result.output).not.toContain(SECRET);
    expect(result.output).toContain("made");
    expect(readFileSync(path.join(root, "made.txt"), "utf8")).toBe("made\n");
    const config = await project.shell("cat config.yaml", { host, workdir: root });
    expect(config.output).not.toContain(ORIGINAL);
  });

  it("reads the agents and presets it may see, but cannot plant through a symlink it made earlier", async () => {
    project = new SandboxProject();
    const { host, root } = projectLayout(project);
    symlinkSync(path.join(root, "agents"), path.join(project.workdir, "agents-link"));
    const result = await project.shell(
      `cat ${root}/agents/me.md; echo x > agents-link/y.md; echo x > ${root}/agents/y.md`,
      { host },
    );
    expect(result.output).toContain(ORIGINAL);
    expect(existsSync(path.join(root, "agents", "y.md"))).toBe(false);
  });
});

describe("files the host runs later", () => {
  it("keeps git's hooks and config and a CLI's settings read-only, and git still commits", async () => {
    project = new SandboxProject();
    const { host, root } = projectLayout(project);
    const git = (command: string) =>
      `git -c user.email=a@b -c user.name=a -c init.defaultBranch=main ${command}`;
    execFileSync("git", ["init", "-q", root]);
    const settings = path.join(project.home, ".claude", "settings.json");
    writeFileSync(settings, "{}\n");
    const configBefore = readFileSync(path.join(root, ".git", "config"), "utf8");
    const sandbox = { write: [path.join(project.home, ".claude")] };
    const result = await project.shell(
      `printf '#!/bin/sh\\ntouch /var/tmp/pwned\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; ` +
        `git config core.hooksPath /var/tmp; echo '{"hooks":{}}' > ${settings}; ` +
        `mv .git/hooks .git/hooks.old; mkdir -p .git/hooks; echo x > .git/hooks/post-commit; ` +
        `${git("add made.txt")} 2>&1; echo made > made.txt && ${git("add made.txt")} && ${git("commit -qm made")} && echo COMMITTED`,
      { host, workdir: root, sandbox },
    );
    expect(result.output).toContain("COMMITTED");
    expect(existsSync(path.join(root, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(existsSync(path.join(root, ".git", "hooks", "post-commit"))).toBe(false);
    expect(existsSync(path.join(root, ".git", "hooks.old"))).toBe(false);
    expect(readFileSync(path.join(root, ".git", "config"), "utf8")).toBe(configBefore);
    expect(readFileSync(settings, "utf8")).toBe("{}\n");
  });
});

describe("hidden means hidden", () => {
  it("keeps data_dir, the vault and the config hidden against the agent's own read, write and symlinks", async () => {
    project = new SandboxProject();
    const { host, root } = projectLayout(project);
    writeFileSync(path.join(project.dataDirectory, "api.token"), "api-token-marker-2b7e");
    const sandbox = {
      read: [path.join(project.dataDirectory, "vault.key"), project.dataDirectory, root],
      write: [path.join(project.dataDirectory, "runs"), path.join(root, "config.yaml")],
    };
    const result = await project.shell(
      `cat ${project.dataDirectory}/vault.key ${project.dataDirectory}/api.token ${project.dataDirectory}/runs/*; ` +
        `cat ${root}/config.yaml ${root}/.env; ln -s ${project.dataDirectory} link; cat link/vault.key; ` +
        `echo x > ${project.dataDirectory}/runs/planted; ls -A ${project.dataDirectory}`,
      { host, sandbox },
    );
    for (const marker of ["vault-key-marker", "api-token-marker", "run-record-marker", ORIGINAL, SECRET]) {
      expect(result.output).not.toContain(marker);
    }
    expect(existsSync(path.join(project.dataDirectory, "runs", "planted"))).toBe(false);
  });

  it("hides the account's passwd home when $HOME points elsewhere, and another agent's explicit workdir", async () => {
    project = new SandboxProject();
    const other = path.join(project.root, "elsewhere", "other-agent");
    mkdirSync(other, { recursive: true });
    writeFileSync(path.join(other, "notes.txt"), "other-explicit-workdir-marker");
    const defaults = ConfigSchema.parse({});
    const host = new SandboxHost({
      config: {
        ...defaults,
        data_dir: project.dataDirectory,
        agents_dir: path.join(project.root, "agents"),
        presets_dir: path.join(project.root, "presets"),
      },
      configFile: project.configFile,
      // $HOME is the project's home: the real account's home must be hidden as well.
      environment: { ...process.env, HOME: project.home },
      workdirs: () => [project.workdir, other],
    });
    const passwdHome = (await import("node:os")).userInfo().homedir;
    const result = await project.shell(
      `cat ${other}/notes.txt; ls -A ${passwdHome} | wc -l; ls -A ${path.dirname(other)}`,
      { host },
    );
    expect(result.output).not.toContain("other-explicit-workdir-marker");
    expect(result.output).toMatch(/^exit code 0\nstdout:\n0\nother-agent\n/);
  });
});
