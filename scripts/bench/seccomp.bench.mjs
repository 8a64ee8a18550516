// The seccomp filter's cost per sandboxed shell call: the same `bash -c true` through runShellCommand
// (the shell tool's path) in bubblewrap with the filter (the default) and with the shorter filter of a
// config that lists a unix socket (which lets unix sockets through; until 2026-11-30 it turned the
// filter off, so this was the cost of the whole filter), for `network: none` and a host list.
// Calls alternate between the variants so load on the machine hits each alike; figures are medians,
// printed as the ratio of the filtered call to the unfiltered one, measured in the same run.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { QUICK } from "./bench-daemon.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const { runShellCommand } = await import(path.join(root, "dist/tools/builtin/run-shell-command.js"));
const { SandboxHost } = await import(path.join(root, "dist/sandbox/sandbox-host.js"));
const { ConfigSchema } = await import(path.join(root, "dist/config/config-schema.js"));

const CALLS = Number(process.env.SECCOMP_BENCH_CALLS ?? (QUICK ? 3 : 40));
const project = mkdtempSync(path.join("/var/tmp", "agentd-seccomp-bench-"));
const workdir = path.join(project, ".agentd", "workspaces", "bench");
mkdirSync(workdir, { recursive: true });

function host(unixSockets) {
  const config = ConfigSchema.parse({ sandbox: { unix_sockets: unixSockets } });
  return new SandboxHost({
    config: { ...config, data_dir: path.join(project, "data"), agents_dir: path.join(project, "agents") },
  });
}
const filtered = host([]);
// A listed socket that does not exist: nothing is bound, but unix sockets pass, as for any list.
const unfiltered = host([path.join(project, "no-such.sock")]);
if (!filtered.availability().available) {
  console.error("the sandbox is not available here:", filtered.availability());
  process.exit(1);
}
const settings = (network) => ({ mode: "workspace-write", network, read: [], write: [], unix_sockets: [] });
const policy = (sandboxHost, network) =>
  sandboxHost.policyFor({ settings: settings(network), workdir, owner: "bench" });
const pairs = {
  "network none": [policy(filtered, "none"), policy(unfiltered, "none")],
  "host list (bridge)": [policy(filtered, ["example.com"]), policy(unfiltered, ["example.com"])],
};

async function call(sandbox) {
  const started = performance.now();
  const result = await runShellCommand({
    command: "true",
    workdir,
    environment: {},
    sandbox,
    maxOutputBytes: 4_096,
    signal: new AbortController().signal,
  });
  if (result.exitCode !== 0) throw new Error(`the call failed: ${result.stderr.text(2_000)}`);
  return performance.now() - started;
}

const samples = Object.fromEntries(Object.keys(pairs).map((name) => [name, { with: [], without: [] }]));
for (const [withFilter, withoutFilter] of Object.values(pairs)) {
  await call(withFilter); // warm-up
  await call(withoutFilter);
}
for (let index = 0; index < CALLS; index++) {
  for (const [name, [withFilter, withoutFilter]] of Object.entries(pairs)) {
    // Which goes first alternates too: neither gets the warmer caches every time.
    if (index % 2 === 0) {
      samples[name].with.push(await call(withFilter));
      samples[name].without.push(await call(withoutFilter));
    } else {
      samples[name].without.push(await call(withoutFilter));
      samples[name].with.push(await call(withFilter));
    }
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(
  `${CALLS} sandboxed shell calls per variant (bash -c true), ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`,
);
for (const [name, { with: withFilter, without }] of Object.entries(samples)) {
  const filteredMedian = median(withFilter);
  const unfilteredMedian = median(without);
  console.log(
    `${name.padEnd(19)} with filter ${filteredMedian.toFixed(1)} ms  without ${unfilteredMedian.toFixed(1)} ms` +
      `  ratio ${(filteredMedian / unfilteredMedian).toFixed(3)}x`,
  );
}
rmSync(project, { recursive: true, force: true });
