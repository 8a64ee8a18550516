import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { execa } from "execa";
import { parseDocument } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { closedPort } from "../support/closed-port.js";
import { killGroup } from "../support/daemon-process.js";
import { packTarballInto } from "../support/packed-tarball.js";
import { type ScriptedLlmServer, startScriptedLlmServer, textReply } from "../support/scripted-llm-server.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** The README's part a newcomer types, between `<!-- tour:start -->` and `<!-- tour:end -->`. */
function tourCommands(readme: string): string[] {
  const tour = /<!-- tour:start[^>]*-->([\s\S]*?)<!-- tour:end -->/.exec(readme)?.[1];
  if (tour === undefined) throw new Error("README.md has no <!-- tour:start --> … <!-- tour:end --> part");
  const blocks = [...tour.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");
  // One command per line; a line ending in a backslash goes on.
  return blocks.flatMap((block) =>
    block
      .replace(/\\\n/g, " ")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#")),
  );
}

/** Sets `llm.base_url` and `llm.api_key` to the scripted model and `server.port` in a config file. */
function pointConfig(file: string, llmUrl: string, port: number): void {
  const config = parseDocument(readFileSync(file, "utf8"));
  config.setIn(["llm", "base_url"], llmUrl);
  config.setIn(["llm", "api_key"], "tour-key");
  config.setIn(["server", "port"], port);
  writeFileSync(file, String(config));
}

/** Starts a long-running command and resolves once its stdout printed a line `ready` accepts. */
async function startUntil(
  command: string,
  options: { cwd: string; env: NodeJS.ProcessEnv },
  ready: (line: string) => boolean,
): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn("bash", ["-c", command], {
    ...options,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const lines = createInterface({ input: child.stdout ?? process.stdin });
  const exited = once(child, "exit").then(() => {
    throw new Error(`\`${command}\` exited before it was ready:\n${stderr}`);
  });
  const line = new Promise<string>((resolve) => lines.on("line", (text) => ready(text) && resolve(text)));
  return { child, line: await Promise.race([line, exited]) };
}

/**
 * The newcomer's first hour as the README tells it, from the npm tarball: each command of the
 * README's tour runs as written, in its order, in a folder where the packed package is installed.
 * What the test does around them: it installs the tarball as npm would (unpacked into
 * node_modules, with this repository's dependencies, no network), sets in the config.yaml the
 * README copies from config.example.yaml what it says to set (the model: a scripted one) and a free
 * port, and sends the tour's `localhost:7070` to that port.
 */
describe("the README's tour against the packed tarball", { timeout: 300_000 }, () => {
  let folder: string;
  let project: string;
  let llm: ScriptedLlmServer;
  const background: ChildProcess[] = [];

  beforeAll(async () => {
    llm = await startScriptedLlmServer();
    llm.setDefaultReply(textReply("No findings."));
    folder = mkdtempSync(path.join(tmpdir(), "agentd-tour-"));
    // --ignore-scripts: `prepare` would rebuild the dist/ that other tests are running.
    const tarball = await packTarballInto(folder);
    project = path.join(folder, "project");
    const installed = path.join(project, "node_modules", "agentd");
    mkdirSync(installed, { recursive: true });
    await execa("tar", [
      "-xzf",
      path.join(folder, tarball.filename),
      "-C",
      installed,
      "--strip-components=1",
    ]);
    symlinkSync(path.join(ROOT, "node_modules"), path.join(installed, "node_modules"));
    mkdirSync(path.join(project, "node_modules", ".bin"));
    symlinkSync("../agentd/bin/agentd.js", path.join(project, "node_modules", ".bin", "agentd"));
    writeFileSync(
      path.join(project, "package.json"),
      JSON.stringify({
        name: "my-agents",
        private: true,
        dependencies: { agentd: `file:../${tarball.filename}` },
      }),
    );
  }, 240_000);

  afterAll(async () => {
    for (const child of background) killGroup(child.pid ?? 0);
    await llm?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it("runs every command of the tour, in order, each succeeding", async () => {
    const commands = tourCommands(readFileSync(path.join(ROOT, "README.md"), "utf8"));
    expect(commands.length).toBeGreaterThanOrEqual(8);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      GITHUB_TOKEN: "ghp_tour-test-value",
      npm_config_offline: "true",
      npm_config_update_notifier: "false",
    };
    for (const key of Object.keys(env)) if (key.startsWith("AGENTD_")) delete env[key];
    let address = "";
    let configured = false;
    const ran: string[] = [];
    for (const written of commands) {
      if (/^npm (install|i) /.test(written)) {
        // Installed above from the tarball, as this command would from the registry.
        ran.push(written);
        continue;
      }
      const command = written.replaceAll("localhost:7070", address);
      if (/\bagentd start\b/.test(written)) {
        const { child, line } = await startUntil(command, { cwd: project, env }, (text) =>
          text.includes('"event":"listening"'),
        );
        background.push(child);
        address = new URL(z.object({ url: z.string() }).parse(JSON.parse(line)).url).host;
      } else if (/--follow\b/.test(written)) {
        const { child } = await startUntil(command, { cwd: project, env }, (text) => text.trim() !== "");
        background.push(child);
        killGroup(child.pid ?? 0);
      } else {
        const variable = /^export ([A-Za-z_][A-Za-z0-9_]*)=/.exec(written)?.[1];
        // An exported variable is read back once, for the commands after it.
        const shown = variable === undefined ? command : `${command}\nprintf %s "$${variable}"`;
        const result = await execa("bash", ["-o", "pipefail", "-c", shown], {
          cwd: project,
          env,
          reject: false,
        });
        expect(result.exitCode, `\`${written}\`\n${result.stdout}\n${result.stderr}`).toBe(0);
        // curl succeeds on any answer: an error body is a failed step all the same.
        expect(result.stdout, `\`${written}\``).not.toMatch(/"error"\s*:\s*\{/);
        if (variable !== undefined) env[variable] = result.stdout;
      }
      if (!configured && existsSync(path.join(project, "config.yaml"))) {
        // What the README says to set in the copied config: the model (here the scripted one); and a
        // free port instead of 7070 (the CLI finds the daemon by it), which the tour's URLs are sent to.
        pointConfig(path.join(project, "config.yaml"), llm.url, await closedPort());
        configured = true;
      }
      ran.push(written);
    }
    expect(ran).toEqual(commands);
  });
});
