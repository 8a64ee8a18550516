import { copyFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxProject } from "./sandbox-project.js";

/** Prints one `name: ok|ERRNO` line per system call (fixtures/sandbox/kernel-surface-probe.py). */
const PROBE_SOURCE = path.resolve(import.meta.dirname, "../fixtures/sandbox/kernel-surface-probe.py");

/** What each call gets inside the sandbox. */
const REFUSED: Record<string, string> = {
  perf_event_open: "EPERM",
  userfaultfd: "EPERM",
  bpf: "EPERM",
  syslog: "EPERM",
  setns: "EPERM",
  open_by_handle_at: "EPERM",
  kexec_load: "EPERM",
  kexec_file_load: "EPERM",
  init_module: "EPERM",
  finit_module: "EPERM",
  delete_module: "EPERM",
  acct: "EPERM",
  quotactl: "EPERM",
  quotactl_fd: "EPERM",
  "ioctl TIOCSTI": "EPERM",
  "ioctl TIOCSTI high bits": "EPERM",
  "ioctl TIOCLINUX": "EPERM",
  "ioctl TIOCSETD": "EPERM",
  "personality READ_IMPLIES_EXEC": "EPERM",
  "unshare CLONE_NEWUSER": "EPERM",
  "clone CLONE_NEWUSER": "EPERM",
  clone3: "ENOSYS",
  mbind: "ENOSYS",
  get_mempolicy: "ENOSYS",
  set_mempolicy: "ENOSYS",
  migrate_pages: "ENOSYS",
  move_pages: "ENOSYS",
  set_mempolicy_home_node: "ENOSYS",
};
/** x86 only: aarch64 has neither. */
const X86_REFUSED: Record<string, string> = { uselib: "EPERM", modify_ldt: "EPERM" };
/** Let through inside as outside. */
const ALLOWED: Record<string, string> = { "ioctl FIONREAD": "EBADF", "personality query": "ok" };
/**
 * Refused inside; outside, a kernel without the family answers the same (this one with vsock
 * makes both sockets, then answers EOPNOTSUPP).
 */
const FAMILY_REFUSED: Record<string, string> = { "socketpair AF_VSOCK": "EAFNOSUPPORT" };
/** Prints the same through the i386 compat ABI (fixtures/sandbox/compat-abi-probe.py), on x86_64. */
const COMPAT_PROBE_SOURCE = path.resolve(import.meta.dirname, "../fixtures/sandbox/compat-abi-probe.py");
/** What each compat call gets inside the sandbox, the filter whole. */
const COMPAT_REFUSED: Record<string, string> = {
  keyctl: "EPERM",
  socketcall: "EPERM",
  "socket AF_UNIX": "EPERM",
  "socket AF_VSOCK": "EAFNOSUPPORT",
  "socketpair AF_VSOCK": "EAFNOSUPPORT",
  "ioctl TIOCSETD": "EPERM",
  bpf: "EPERM",
};
/** Calls a kernel may be built without (this machine's answers ENOSYS outside for them, then). */
const OPTIONAL = new Set(["kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module"]);

function outcomes(output: string): Map<string, string> {
  const lines = output.split("\n").filter((line) => line.includes(": "));
  return new Map(lines.map((line) => line.split(": ", 2) as [string, string]));
}

let project: SandboxProject;
/** The probes' copies in the workdir: a checkout under /tmp is hidden inside the sandbox. */
let PROBE: string;
let COMPAT_PROBE: string;

beforeAll(() => {
  project = new SandboxProject();
  PROBE = path.join(project.workdir, "kernel-surface-probe.py");
  COMPAT_PROBE = path.join(project.workdir, "compat-abi-probe.py");
  copyFileSync(PROBE_SOURCE, PROBE);
  copyFileSync(COMPAT_PROBE_SOURCE, COMPAT_PROBE);
});

afterAll(() => project.dispose());

describe("the kernel surface a sandboxed process reaches", () => {
  it("refuses each exploit primitive and way past the namespaces, which the same call reaches outside", async () => {
    const expected = { ...REFUSED, ...(process.arch === "x64" ? X86_REFUSED : {}) };
    const outside = outcomes((await project.shell(`python3 ${PROBE}`, { sandbox: "off" })).output);
    const hosts = [
      { host: project.host(), label: "filter whole" },
      {
        host: project.host(undefined, { unix_sockets: [`${project.root}/listed.sock`] }),
        label: "unix sockets listed",
      },
    ];
    for (const { host, label } of hosts) {
      const inside = outcomes((await project.shell(`python3 ${PROBE}`, { host })).output);
      for (const [name, errno] of Object.entries(expected)) {
        expect(inside.get(name), `${name}, ${label}`).toBe(errno);
        const before = outside.get(name);
        if (!(OPTIONAL.has(name) && before === "ENOSYS")) expect(before, `${name} outside`).not.toBe(errno);
      }
      for (const [name, errno] of Object.entries(FAMILY_REFUSED)) {
        expect(inside.get(name), `${name}, ${label}`).toBe(errno);
        expect(outside.get(name), `${name} outside`).toBeDefined();
      }
      for (const [name, result] of Object.entries(ALLOWED)) {
        expect(inside.get(name), `${name}, ${label}`).toBe(result);
        expect(outside.get(name), `${name} outside`).toBe(result);
      }
    }
  });

  it("refuses the same through the i386 compat ABI a 32-bit program calls in by", async () => {
    if (process.arch !== "x64") return;
    const outside = outcomes((await project.shell(`python3 ${COMPAT_PROBE}`, { sandbox: "off" })).output);
    if (outside.get("getpid") !== "ok") return; // a kernel without IA32 emulation
    const inside = outcomes((await project.shell(`python3 ${COMPAT_PROBE}`)).output);
    expect(inside.get("getpid")).toBe("ok");
    for (const [name, errno] of Object.entries(COMPAT_REFUSED)) {
      expect(inside.get(name), name).toBe(errno);
      expect(outside.get(name), `${name} outside`).toBeDefined();
    }
    expect(outside.get("keyctl")).not.toBe("EPERM");
  });

  it("still runs what agents run: git, node with a worker thread, python threads, setarch -R", async () => {
    const script = [
      "git init -q repository && cd repository",
      "git -c user.name=a -c user.email=a@b commit -q --allow-empty -m one && git log --format=%s",
      `node -e 'const { Worker } = require("node:worker_threads"); new Worker("console.log(\\"worker\\")", { eval: true })'`,
      `python3 -c 'import threading; t = threading.Thread(target=print, args=("thread",)); t.start(); t.join()'`,
      "setarch -R echo no-randomize",
    ].join(" && ");
    const result = await project.shell(script);
    expect(result.output).toContain("one");
    expect(result.output).toContain("worker");
    expect(result.output).toContain("thread");
    expect(result.output).toContain("no-randomize");
  });
});
