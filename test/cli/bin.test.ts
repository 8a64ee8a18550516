import { spawn } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { textReply } from "../support/scripted-llm-server.js";
import type { TempProject } from "../support/temp-project.js";
import { useTestKit } from "../support/test-kit.js";

/** The bin as package.json names it (`npm run build` first, as `npm test` does). */
const BIN = path.resolve(import.meta.dirname, "../../bin/agentd.js");

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end: the bin started as a shell starts it (its #! line), from `cwd`. */
async function run(command: string, args: string[], cwd: string): Promise<Finished> {
  const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

describe("the agentd bin", () => {
  const kit = useTestKit("test");

  /** A project with one agent on a scripted model answering `answer`. */
  async function startProject(answer = "hi"): Promise<TempProject> {
    const { project } = await kit.scriptedProject(textReply(answer), {
      config: { log: { level: "silent" } },
    });
    project.writeAgent("writer", { task: "Say hi" });
    return project;
  }

  it("runs an agent through a symlink as npm links it, with the root options before `run`", async () => {
    const { root } = await startProject("hi from the bin");
    const linked = path.join(root, "node_modules", ".bin", "agentd");
    mkdirSync(path.dirname(linked), { recursive: true });
    symlinkSync(BIN, linked);
    const finished = await run(
      linked,
      ["--config", path.join(root, "config.yaml"), "--json", "run", "writer"],
      root,
    );
    expect(finished.code, finished.stderr).toBe(0);
    const lines = finished.stdout.trim().split("\n");
    expect(JSON.parse(lines.at(-1) ?? "{}")).toMatchObject({ agent: "writer", status: "completed" });
  });

  it("answers every other command through its bundle, with the same exit codes", async () => {
    const { root } = await startProject();
    const help = await run(BIN, ["--help"], root);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("run <agent> [task]");
    expect(help.stdout).toContain("validate");
    const validate = await run(BIN, ["validate"], root);
    expect(validate.code, validate.stderr).toBe(0);
    const unknown = await run(BIN, ["frobnicate"], root);
    expect(unknown.code).toBe(2);
    const noAgent = await run(BIN, ["run", "nobody"], root);
    expect(noAgent.code).toBe(2);
    expect(noAgent.stderr).toContain('no agent "nobody"');
  });

  it("imports main.js when only the TypeScript compiler's output is built (no launcher bundle)", async () => {
    const root = mkdtempSync(path.join(tmpdir(), "agentd-bin-"));
    try {
      mkdirSync(path.join(root, "bin"));
      mkdirSync(path.join(root, "dist", "cli"), { recursive: true });
      for (const name of ["agentd.js", "package.json"]) {
        copyFileSync(path.join(path.dirname(BIN), name), path.join(root, "bin", name));
      }
      writeFileSync(path.join(root, "package.json"), '{ "type": "module" }');
      writeFileSync(
        path.join(root, "dist", "cli", "main.js"),
        'console.log("main.js", process.argv.slice(2).join(" "));',
      );
      const runA = () => run(process.execPath, [path.join(root, "bin", "agentd.js"), "run", "a"], root);
      expect(await runA()).toMatchObject({ code: 0, stdout: "main.js run a\n" });
      writeFileSync(
        path.join(root, "dist", "cli", "launch.cjs"),
        'exports.launch = async () => console.log("launcher", process.argv.slice(2).join(" "));',
      );
      expect(await runA()).toMatchObject({ code: 0, stdout: "launcher run a\n" });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
