// The sandbox's added cost per shell call: the same `bash -c true` through runShellCommand (the
// shell tool's path) unsandboxed (`mode: off`), in bubblewrap with `network: none`, and with a host
// list (proxy + in-sandbox bridge). Calls alternate between the variants so load on the machine
// hits each alike; figures are medians, printed as ms added and as a ratio to the unsandboxed call.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const { runShellCommand } = await import(path.join(root, "dist/tools/builtin/run-shell-command.js"));
const { SandboxHost } = await import(path.join(root, "dist/sandbox/sandbox-host.js"));
const { ConfigSchema } = await import(path.join(root, "dist/config/config-schema.js"));

const CALLS = Number(process.env.SANDBOX_BENCH_CALLS ?? 40);
const project = mkdtempSync(path.join("/var/tmp", "agentd-sandbox-bench-"));
const workdir = path.join(project, ".agentd", "workspaces", "bench");
const config = ConfigSchema.parse({});
const host = new SandboxHost({
  config: { ...config, data_dir: path.join(project, "data"), agents_dir: path.join(project, "agents") },
});
if (!host.availability().available) {
  console.error("the sandbox is not available here:", host.availability());
  process.exit(1);
}
const settings = (overrides) => ({
  mode: "workspace-write",
  network: "none",
  read: [],
  write: [],
  ...overrides,
});
const variants = {
  unsandboxed: host.policyFor({ settings: settings({ mode: "off" }), workdir, owner: "bench" }),
  "network none": host.policyFor({ settings: settings({}), workdir, owner: "bench" }),
  "host list (proxy)": host.policyFor({
    settings: settings({ network: ["example.com"] }),
    workdir,
    owner: "bench",
  }),
};
const { mkdirSync } = await import("node:fs");
mkdirSync(workdir, { recursive: true });

async function call(sandbox) {
  const started = performance.now();
  const result = await runShellCommand({
    command: "true",
    workdir,
    environment: {},
    sandbox,
    timeoutMilliseconds: 30_000,
    maxOutputBytes: 4_096,
    signal: new AbortController().signal,
  });
  if (result.exitCode !== 0) throw new Error(`the call failed: ${JSON.stringify(result.exitCode)}`);
  return performance.now() - started;
}

const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
for (const sandbox of Object.values(variants)) await call(sandbox); // warm-up
for (let index = 0; index < CALLS; index++) {
  for (const [name, sandbox] of Object.entries(variants)) samples[name].push(await call(sandbox));
}
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const baseline = median(samples.unsandboxed);
console.log(
  `${CALLS} shell calls per variant (bash -c true), ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`,
);
for (const [name, values] of Object.entries(samples)) {
  const value = median(values);
  const added = value - baseline;
  console.log(
    `${name.padEnd(18)} median ${value.toFixed(1)} ms` +
      (name === "unsandboxed"
        ? "  (baseline)"
        : `  added ${added.toFixed(1)} ms  ratio ${(value / baseline).toFixed(2)}x`),
  );
}
rmSync(project, { recursive: true, force: true });
