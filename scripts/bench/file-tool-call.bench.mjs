// The cost of one file-tool call (read_file and write_file of a small file, list_dir of a small
// folder) confined by held descriptors (dist/), against the previous implementation measured in
// the same run: the tools that checked the resolved path and then opened it by name, rebuilt from
// git (OLD_COMMIT) into a temporary folder. Each call is what the executor does with a built-in
// tool: `subject` (the permission subject, unchanged) then `run`, with the agent's sandbox policy
// made afresh for the call, as the executor makes it. Old and new alternate in short batches so
// the machine's load hits both alike; figures are medians per call and the ratio new/old.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { transformSync } from "esbuild";
import { QUICK } from "./bench-daemon.mjs";

/** The last commit whose file tools opened by name after a path check. */
const OLD_COMMIT = "9cc2768";
const OLD_FILES = [
  "tools/builtin/read-file-tool",
  "tools/builtin/write-file-tool",
  "tools/builtin/list-dir-tool",
  "tools/builtin/looks-binary",
  "tools/builtin/read-lines",
  "tools/builtin/text-lines",
  "tools/builtin/path-subject",
  "tools/workdir/confine-path",
  "tools/workdir/walk-workdir",
];
/** Modules the old files import unchanged: linked from dist/. */
const SHARED = ["errors", "tools/tool-definition.js"];
const ROUNDS = Number(process.env.FILE_TOOL_BENCH_ROUNDS ?? (QUICK ? 2 : 40));
const BATCH = QUICK ? 5 : 25;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const { readFileTool } = await import(path.join(root, "dist/tools/builtin/read-file-tool.js"));
const { writeFileTool } = await import(path.join(root, "dist/tools/builtin/write-file-tool.js"));
const { listDirTool } = await import(path.join(root, "dist/tools/builtin/list-dir-tool.js"));
const { SandboxHost } = await import(path.join(root, "dist/sandbox/sandbox-host.js"));
const { sandboxMounts } = await import(path.join(root, "dist/sandbox/sandbox-mounts.js"));
const { ConfigSchema } = await import(path.join(root, "dist/config/config-schema.js"));

/** The old tools, transpiled from git next to links to dist/; undefined when git cannot give them. */
async function loadOldTools(folder) {
  try {
    mkdirSync(folder, { recursive: true });
    symlinkSync(path.join(root, "node_modules"), path.join(folder, "node_modules"));
    for (const name of OLD_FILES) {
      const source = execFileSync("git", ["show", `${OLD_COMMIT}:src/${name}.ts`], {
        cwd: root,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      });
      const output = transformSync(source, { loader: "ts", format: "esm", target: "es2023" }).code;
      mkdirSync(path.dirname(path.join(folder, name)), { recursive: true });
      writeFileSync(path.join(folder, `${name}.js`), output);
    }
    for (const shared of SHARED) symlinkSync(path.join(root, "dist", shared), path.join(folder, shared));
    const load = (name) => import(pathToFileURL(path.join(folder, `tools/builtin/${name}.js`)).href);
    return {
      read_file: (await load("read-file-tool")).readFileTool,
      write_file: (await load("write-file-tool")).writeFileTool,
      list_dir: (await load("list-dir-tool")).listDirTool,
    };
  } catch (error) {
    console.log(
      `(the old tools could not be rebuilt from git ${OLD_COMMIT}: ${error.message.split("\n")[0]})`,
    );
    return undefined;
  }
}

function median(samples) {
  const sorted = [...samples].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)];
}

const folder = mkdtempSync(path.join(tmpdir(), "agentd-bench-file-tools-"));
try {
  const project = path.join(folder, "project");
  const workdir = path.join(project, ".agentd", "workspaces", "bench");
  mkdirSync(path.join(workdir, "docs"), { recursive: true });
  const text = Array.from({ length: 40 }, (_, index) => `line ${index + 1} of a small text file`).join("\n");
  writeFileSync(path.join(workdir, "docs", "notes.md"), `${text}\n`);
  for (let index = 0; index < 20; index++) writeFileSync(path.join(workdir, `file-${index}.txt`), "x\n");

  const config = ConfigSchema.parse({});
  const host = new SandboxHost({
    config: { ...config, data_dir: path.join(project, "data"), agents_dir: path.join(project, "agents") },
  });
  const settings = { mode: "workspace-write", network: "none", read: [], write: [] };
  const context = () => ({
    workdir,
    signal: new AbortController().signal,
    // Made per call, as the executor does.
    sandbox: host.policyFor({ settings, workdir, owner: 'agent "bench"' }),
    settings: config.tools,
    pathAllowed: () => true,
    redactPiece: (piece) => piece,
  });
  const calls = {
    read_file: { path: "docs/notes.md" },
    write_file: { path: "docs/out.md", content: "a small file\nof two lines\n" },
    list_dir: { path: "." },
  };
  const current = { read_file: readFileTool, write_file: writeFileTool, list_dir: listDirTool };
  const old = await loadOldTools(path.join(folder, "old"));

  async function batch(tool, input) {
    const started = performance.now();
    for (let index = 0; index < BATCH; index++) {
      const callContext = context();
      tool.subject(input, callContext);
      const result = await tool.run(input, callContext);
      if (!result.ok) throw new Error(`${tool.name} failed: ${result.output}`);
    }
    return (performance.now() - started) / BATCH;
  }

  const [loadAverage] = os.loadavg();
  console.log(`machine: ${os.cpus().length} cores, load average ${loadAverage?.toFixed(1)}`);
  console.log(`per call (subject + run), median of ${ROUNDS} batches of ${BATCH}, old and new alternating`);
  for (const [name, input] of Object.entries(calls)) {
    const samples = { current: [], old: [] };
    for (let warm = 0; warm < 3; warm++) {
      await batch(current[name], input);
      if (old) await batch(old[name], input);
    }
    for (let round = 0; round < ROUNDS; round++) {
      samples.current.push(await batch(current[name], input));
      if (old) samples.old.push(await batch(old[name], input));
    }
    const now = median(samples.current);
    const line = `  ${name.padEnd(11)} held descriptors ${(now * 1000).toFixed(0).padStart(5)} µs`;
    if (!old) {
      console.log(line);
      continue;
    }
    const before = median(samples.old);
    console.log(
      `${line}   open by name (baseline) ${(before * 1000).toFixed(0).padStart(5)} µs   ratio ${(now / before).toFixed(2)}x`,
    );
  }

  // What the sandbox check adds when a policy is new (per call): its layers, computed once per call.
  const policy = () => host.policyFor({ settings, workdir, owner: 'agent "bench"' });
  const layers = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    for (let index = 0; index < BATCH; index++) sandboxMounts(policy());
    layers.push((performance.now() - started) / BATCH);
  }
  console.log(
    `  of which the sandbox's layers (policyFor + sandboxMounts): ${(median(layers) * 1000).toFixed(0)} µs`,
  );
} finally {
  rmSync(folder, { recursive: true, force: true });
}
