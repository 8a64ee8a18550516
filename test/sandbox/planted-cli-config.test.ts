import { type ChildProcess, spawn } from "node:child_process";
import { lstatSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SandboxSettingsSchema } from "../../src/config/sandbox-settings.js";
import { cliSandboxNeeds } from "../../src/sandbox/cli-sandbox-defaults.js";
import { runShellCommand } from "../../src/tools/builtin/run-shell-command.js";
import { projectLayout } from "./project-layout.js";
import { SandboxProject } from "./sandbox-project.js";

// Every codex run's sandbox may write its config folder ($CODEX_HOME or ~/.codex); a config.toml
// that exists is read-only there, a missing one can be made. The daemon reads that file itself
// before each codex run starts (for the retry overrides of a provider the user defined), on its
// event loop: a FIFO made there held the loop, and so every run, API call and timer of the
// daemon, until something opened the FIFO to write, which nothing ever does.

const dist = path.join(import.meta.dirname, "..", "..", "dist");

let project: SandboxProject;
let child: ChildProcess | undefined;
afterEach(() => {
  if (child?.exitCode === null && child.pid !== undefined) child.kill("SIGKILL");
  child = undefined;
  project.dispose();
});

/** What the built daemon code makes of $CODEX_HOME as a codex run starts, in a process of its own. */
async function retryOverridesIn(codexHome: string): Promise<{ code: number | null; said: string }> {
  const script =
    `const { codexRetryOverrides } = await import(${JSON.stringify(path.join(dist, "workers/cli/codex-provider.js"))});` +
    `console.log(JSON.stringify(codexRetryOverrides({ CODEX_HOME: ${JSON.stringify(codexHome)} })));`;
  const started = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  child = started;
  let said = "";
  started.stdout.on("data", (chunk: Buffer) => (said += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => started.on("exit", resolve));
  return { code, said: said.trim() };
}

describe("a codex run's config folder", () => {
  it("cannot hold the daemon with a FIFO made where config.toml was missing", async () => {
    project = new SandboxProject();
    const { host } = projectLayout(project);
    const codexHome = path.join(project.home, "codex-home");
    mkdirSync(codexHome, { recursive: true });
    const environment = { HOME: project.home, CODEX_HOME: codexHome };
    const codex = cliSandboxNeeds("codex", environment);
    // As cli-worker.ts builds a codex run's policy (the run folder left out).
    const policy = host.policyFor({
      settings: SandboxSettingsSchema.parse({}),
      workdir: project.workdir,
      owner: "agent me (CLI codex)",
      write: codex.write,
      protect: codex.protect,
    });
    const made = await runShellCommand({
      command: `mkfifo ${codexHome}/config.toml && echo MADE`,
      workdir: project.workdir,
      environment: {},
      sandbox: policy,
      maxOutputBytes: 10_000,
      signal: AbortSignal.timeout(30_000),
    });
    expect(made.stdout.text(100)).toContain("MADE");
    expect(lstatSync(path.join(codexHome, "config.toml")).isFIFO()).toBe(true);

    // The next codex run: the daemon skips what is not a regular file (it used to wait forever).
    expect(await retryOverridesIn(codexHome)).toEqual({ code: 0, said: "[]" });
  });

  it("still reads a provider the user defined there", async () => {
    project = new SandboxProject();
    const codexHome = path.join(project.home, "codex-home");
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      path.join(codexHome, "config.toml"),
      'model_provider = "local"\n[model_providers.local]\nbase_url = "http://127.0.0.1:1"\n',
    );
    const result = await retryOverridesIn(codexHome);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.said)).toEqual([
      "-c",
      "model_providers.local.request_max_retries=1",
      "-c",
      "model_providers.local.stream_max_retries=1",
    ]);
  });
});
