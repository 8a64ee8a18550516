import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateProject } from "../../../src/cli/commands/validate.js";
import { agentText, createTempProject, type TempProject } from "../../support/temp-project.js";

let project: TempProject;
afterEach(() => project.remove());

/** An executable script at `file` whose first line is `shebang`. */
function script(file: string, shebang: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${shebang}\nconsole.log("hi");\n`);
  chmodSync(file, 0o755);
}

async function warningsOf(environment: NodeJS.ProcessEnv, cli: string): Promise<string[]> {
  writeFileSync(
    path.join(project.root, "config.yaml"),
    `agents_dir: ./agents\npresets_dir: ./presets\ncli_tools:\n  mycli: { command: ${cli} }\n`,
  );
  project.writeAgent("coder.md", agentText("codes", "worker: cli\ncli: { tool: mycli }\n"));
  const { report } = await validateProject({ cwd: project.root, config: "config.yaml", environment });
  expect(report.agents[0]?.valid).toBe(true);
  return report.agents[0]?.warnings ?? [];
}

describe("agentd validate and a CLI the sandbox hides", () => {
  it("warns when the CLI is a script under the home folder run by an interpreter there (nvm)", async () => {
    project = createTempProject();
    const home = path.join(project.root, "home");
    // node from nvm; the CLI installed with npm's prefix in ~/.npm-global.
    const nodeBin = path.join(home, ".nvm/versions/node/v20/bin");
    script(path.join(nodeBin, "mynode"), "#!/bin/sh");
    const prefix = path.join(home, ".npm-global");
    const packageFolder = path.join(prefix, "lib/node_modules/mycli");
    script(path.join(packageFolder, "bin/cli.js"), "#!/usr/bin/env mynode");
    writeFileSync(path.join(packageFolder, "package.json"), '{"name":"mycli"}');
    mkdirSync(path.join(prefix, "bin"));
    symlinkSync("../lib/node_modules/mycli/bin/cli.js", path.join(prefix, "bin/mycli"));
    const environment = { HOME: home, PATH: `${prefix}/bin:${nodeBin}:/usr/bin:/bin` };
    const warnings = await warningsOf(environment, "mycli");
    expect(warnings).toEqual([
      expect.stringMatching(
        /^cli: mycli runs with .*\/\.nvm\/versions\/node\/v20\/bin\/mynode, which the sandbox hides: the CLI cannot start; install it outside your home folder/,
      ),
      `cli: mycli is a script of the package in ${packageFolder}, which the sandbox hides: the CLI cannot load its own files; install it outside your home folder, or add its folder to this agent's sandbox.read`,
    ]);
    // With the folders made visible, nothing is left to say.
    project.writeAgent(
      "coder.md",
      agentText(
        "codes",
        `worker: cli\ncli: { tool: mycli }\nsandbox: { read: [${nodeBin}, ${packageFolder}] }\n`,
      ),
    );
    const { report } = await validateProject({ cwd: project.root, config: "config.yaml", environment });
    expect(report.agents[0]?.warnings).toEqual([]);
  });

  it("has nothing to say about a CLI installed outside the home folder", async () => {
    project = createTempProject();
    const tools = path.join(project.root, "opt", "mycli");
    script(path.join(tools, "mycli"), "#!/usr/bin/env node");
    const environment = { HOME: path.join(project.root, "home"), PATH: `${tools}:/usr/bin:/bin` };
    expect(await warningsOf(environment, "mycli")).toEqual([]);
  });
});
