import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { prepareSandboxedChild } from "../../src/sandbox/sandboxed-child.js";
import { testSandboxHost } from "../support/test-sandbox.js";
import { isOn, serviceEmulation, serviceSettings } from "./systemd-emulation.js";

const UNIT = path.resolve(import.meta.dirname, "../../packaging/agentd.service");
const service = serviceSettings(UNIT);

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/**
 * An agent's shell call as the daemon starts it — the policy of a default agent in its default
 * workspace, wrapped by `prepareSandboxedChild` into bubblewrap's real argument list — run inside
 * an outer bubblewrap that stands for the service: a user namespace as uid 1000 without
 * capabilities, no_new_privs, and the mounts the given `[Service]` settings make.
 */
async function shellCallUnder(settings: Record<string, string>) {
  const base = mkdtempSync(path.join(tmpdir(), "agentd-unit-"));
  folders.push(base);
  const project = path.join(base, "project");
  const workdir = path.join(project, ".agentd", "workspaces", "notes");
  mkdirSync(path.join(project, "agents"), { recursive: true });
  mkdirSync(workdir, { recursive: true });
  const policy = testSandboxHost(project).policyFor({
    settings: ConfigSchema.parse({}).sandbox,
    workdir,
    owner: 'agent "notes"',
  });
  const prepared = await prepareSandboxedChild(policy, {
    command: "bash",
    arguments: ["-c", "echo written > proof && cat proof && grep NoNewPrivs /proc/self/status"],
    workdir,
    environment: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
  });
  const emulation = serviceEmulation(settings, base);
  // The daemon's seccomp filter reaches the inner bubblewrap on descriptor 3, through the outer one.
  const subprocess = execa(
    prepared.command,
    [
      ...["--unshare-user", "--uid", "1000", "--gid", "1000", "--dev-bind", "/", "/"],
      ...emulation.arguments,
      ...["--chdir", workdir, "--", prepared.command, ...prepared.arguments],
    ],
    {
      env: prepared.environment,
      extendEnv: false,
      reject: false,
      timeout: 30_000,
      stdio: ["ignore", "pipe", "pipe", ...(prepared.extraStdio as ("pipe" | "ipc" | "ignore")[])],
      serialization: "json",
    },
  );
  prepared.started(subprocess);
  const result = await subprocess;
  await prepared.release();
  return { result, emulation, workdir };
}

describe("bubblewrap under packaging/agentd.service", { timeout: 60_000 }, () => {
  it("runs an agent's shell call under the unit's own settings", async () => {
    const { result, emulation, workdir } = await shellCallUnder(service);
    expect(emulation.emulated).toEqual(
      expect.arrayContaining([
        "NoNewPrivileges=true",
        "ProtectSystem=full",
        "ProtectHome=read-only",
        "PrivateTmp=true",
        "PrivateDevices=true",
        "ProtectControlGroups=true",
      ]),
    );
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/^written\nNoNewPrivs:\s+1$/);
    expect(result.exitCode).toBe(0);
    expect(readFileSync(path.join(workdir, "proof"), "utf8")).toBe("written\n");
  });

  it("runs it under ProtectSystem=strict too (with the service's own folder writable)", async () => {
    const { result } = await shellCallUnder({ ...service, ProtectSystem: "strict" });
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
  });

  it.each(["ProtectKernelTunables", "ProtectKernelLogs"])(
    "fails under %s=true, a mount over part of /proc: why the unit leaves it out",
    async (setting) => {
      const { result } = await shellCallUnder({ ...service, [setting]: "true" });
      expect(result.exitCode).not.toBe(0);
      expect(result.stderr).toContain("Can't mount proc");
    },
  );
});

describe("packaging/agentd.service hardening", () => {
  it("sets nothing known to break bubblewrap", () => {
    for (const setting of ["ProtectKernelTunables", "ProtectKernelLogs", "MemoryDenyWriteExecute"]) {
      expect({ setting, on: isOn(service[setting]) }).toEqual({ setting, on: false });
    }
    for (const setting of ["RestrictNamespaces", "PrivateUsers", "ProtectProc", "ProcSubset"]) {
      expect({ setting, value: service[setting] }).toEqual({ setting, value: undefined });
    }
  });

  it("lets through the system calls and socket families bubblewrap needs, where it filters them", () => {
    const filter = service["SystemCallFilter"];
    if (filter !== undefined) {
      expect(filter.startsWith("~")).toBe(false);
      const allowed = filter.split(/\s+/);
      expect(allowed).toContain("@system-service");
      // mount, umount2, pivot_root: @system-service has clone, unshare and setns, not these.
      expect(allowed).toContain("@mount");
    }
    const families = service["RestrictAddressFamilies"];
    if (families !== undefined) {
      expect(families.split(/\s+/)).toEqual(expect.arrayContaining(["AF_UNIX", "AF_NETLINK"]));
    }
  });

  it("says why, in a comment right above it, for every hardening setting it keeps", () => {
    const lines = readFileSync(UNIT, "utf8").split("\n");
    const hardening =
      /^(NoNewPrivileges|Protect\w+|Private\w+|Restrict\w+|SystemCall\w+|CapabilityBoundingSet|AmbientCapabilities|LockPersonality|MemoryDenyWriteExecute)=/;
    const unexplained = lines.filter((line, index) => {
      if (!hardening.test(line)) return false;
      let above = index - 1;
      while (above >= 0 && hardening.test(lines[above] ?? "")) above -= 1;
      return !(lines[above] ?? "").startsWith("#");
    });
    expect(unexplained).toEqual([]);
  });
});
