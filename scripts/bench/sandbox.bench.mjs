// What a shell call costs against its floor: the same `bash -c true` through runShellCommand (the
// shell tool's path) unsandboxed (`mode: off`) against a plain spawn of bash, in bubblewrap with
// `network: none`, and with a host list (the proxy, and the listener handed over from the sandbox),
// each against a hand-written bwrap call with the same isolation: bubblewrap's very arguments for
// the same policy (every mount, every hidden path) and the same seccomp filter, spawned by hand
// without agentd's path (no policy, no execa, no proxy, no clean-up). The host list's floor runs
// the same perl handoff (a listener made in the sandbox's network namespace, sent over a
// socketpair nobody reads) before the command: socat, the static bridge the floor used to start
// beside the command, aborts under the filter, so it only ran with the filter off and without the
// policy's mounts. Those minimal floors (the root read-only, a private /tmp, the workdir; socat
// beside the command, no filter) are still printed, with the ratios to them. Calls alternate
// between the variants so load on the machine hits each alike; figures are medians with
// quartiles, printed as ratios to the floors measured in the same run. Target: each sandboxed call
// within 1.5x its floor.
// Usage: node scripts/bench/sandbox.bench.mjs [--quick] (after a build).
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { QUICK } from "./bench-daemon.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const { runShellCommand } = await import(path.join(root, "dist/tools/builtin/run-shell-command.js"));
const { SandboxHost } = await import(path.join(root, "dist/sandbox/sandbox-host.js"));
const { ConfigSchema } = await import(path.join(root, "dist/config/config-schema.js"));
const { findOnPath } = await import(path.join(root, "dist/sandbox/bubblewrap.js"));
const { bubblewrapArguments } = await import(path.join(root, "dist/sandbox/bubblewrap-arguments.js"));
const { openSeccompDescriptor } = await import(path.join(root, "dist/sandbox/seccomp-descriptor.js"));
const { requireSeccompProgram } = await import(path.join(root, "dist/sandbox/seccomp-requirement.js"));
const { handoffInvocation, handoffProgram } = await import(
  path.join(root, "dist/sandbox/listener-handoff.js")
);

const CALLS = Number(process.env.SANDBOX_BENCH_CALLS ?? (QUICK ? 3 : 40));
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

/** The floors: what the same command costs spawned by hand, without agentd's path. */
const { spawn } = await import("node:child_process");
const { closeSync } = await import("node:fs");
function spawned(command, argv, { extraStdio = [], environment } = {}) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, {
      stdio: ["ignore", "ignore", "ignore", ...extraStdio],
      cwd: workdir,
      ...(environment === undefined ? {} : { env: environment }),
    });
    for (const entry of extraStdio) if (typeof entry === "number") closeSync(entry);
    child.on("error", reject);
    child.on("exit", (code) => {
      for (const stream of child.stdio) stream?.destroy();
      if (code === 0) resolve(performance.now() - started);
      else reject(new Error(`${command} exited ${code}`));
    });
  });
}
const minimal = [
  ...["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"],
  ...["--bind", workdir, workdir, "--chdir", workdir],
  ...["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"],
];
const filter = requireSeccompProgram("the bench");
const searchPath = process.env.PATH ?? "";
const environment = { PATH: searchPath };
// The same isolation as the calls': bubblewrap's arguments for the same policies, the same filter.
const sameIsolation = (policy) => bubblewrapArguments(policy, { read: [], write: [] });
const handoff = handoffProgram(searchPath);
const socat = findOnPath("socat", searchPath);
const socatBeside = (argv) => [
  "sh",
  "-c",
  `${socat} TCP-LISTEN:3128,bind=127.0.0.1,reuseaddr UNIX-CONNECT:${path.join(project, "proxy.sock")} & exec ${argv.join(" ")}`,
];
const floors = {
  "plain spawn": () => spawned("bash", ["-c", "true"]),
  "bwrap, same isolation": () =>
    spawned(
      "bwrap",
      ["--seccomp", "3", ...sameIsolation(variants["network none"]), "--", "bash", "-c", "true"],
      { extraStdio: [openSeccompDescriptor(filter)], environment },
    ),
  ...(handoff === undefined
    ? {}
    : {
        "bwrap + handoff, same isolation": () => {
          const priority = Math.min(19, os.getPriority() + 10);
          const invocation = handoffInvocation(handoff, 3128, priority, ["bash", "-c", "true"], environment);
          return spawned(
            "bwrap",
            [
              "--seccomp",
              "3",
              ...sameIsolation(variants["host list (proxy)"]),
              "--",
              ...invocation.arguments,
            ],
            { extraStdio: [openSeccompDescriptor(filter), "pipe"], environment: invocation.environment },
          );
        },
      }),
  "minimal bwrap": () => spawned("bwrap", [...minimal, "bash", "-c", "true"]),
  // A static bridge started in the sandbox beside the command: with the filter off (socat aborts
  // under it) and none of the policy's mounts.
  ...(socat === undefined
    ? {}
    : {
        "minimal bwrap + socat": () => spawned("bwrap", [...minimal, ...socatBeside(["bash", "-c", "true"])]),
      }),
};

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

const samples = Object.fromEntries(
  [...Object.keys(variants), ...Object.keys(floors)].map((name) => [name, []]),
);
for (const sandbox of Object.values(variants)) await call(sandbox); // warm-up
for (const floor of Object.values(floors)) await floor();
for (let index = 0; index < CALLS; index++) {
  for (const [name, sandbox] of Object.entries(variants)) samples[name].push(await call(sandbox));
  for (const [name, floor] of Object.entries(floors)) samples[name].push(await floor());
}
/** The median and the quartiles of a list of numbers. */
const quartiles = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (fraction) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];
  return { median: at(0.5), low: at(0.25), high: at(0.75) };
};
const format = ({ median, low, high }, digits = 1) =>
  `${median.toFixed(digits)} (quartiles ${low.toFixed(digits)}–${high.toFixed(digits)})`;
console.log(
  `${CALLS} shell calls per variant (bash -c true), ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}`,
);
const against = [
  ["unsandboxed", "plain spawn"],
  ["network none", "bwrap, same isolation"],
  ["host list (proxy)", handoff === undefined ? "bwrap, same isolation" : "bwrap + handoff, same isolation"],
  ["network none", "minimal bwrap"],
  ["host list (proxy)", socat === undefined ? "minimal bwrap" : "minimal bwrap + socat"],
];
for (const name of Object.keys(floors))
  console.log(`${name.padEnd(32)} median ${format(quartiles(samples[name]))} ms  (floor)`);
for (const [name, floor] of against) {
  // Ratios of calls made side by side (call i against floor i), so a load spike hits both.
  const ratios = samples[name].map((value, index) => value / samples[floor][index]);
  console.log(
    `${name.padEnd(18)} median ${format(quartiles(samples[name]))} ms; ratio to ${floor}: ` +
      `${(quartiles(samples[name]).median / quartiles(samples[floor]).median).toFixed(2)}x of medians, ` +
      `paired ${format(quartiles(ratios), 2)}`,
  );
}
if (socat === undefined) console.log("minimal bwrap + socat floor: skipped (socat is not installed)");
if (handoff === undefined) console.log("bwrap + handoff floor: skipped (perl is missing)");
rmSync(project, { recursive: true, force: true });
