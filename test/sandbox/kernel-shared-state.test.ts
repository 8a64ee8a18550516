import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxSettingsSchema } from "../../src/config/sandbox-settings.js";
import { MARKERS, SandboxProject } from "./sandbox-project.js";
import { projectForNobody, startAsNobody } from "./sandboxed-as-nobody.js";

/**
 * Reaches for what the kernel shares past bubblewrap's namespaces, one line each: the session and
 * user keyrings (keyctl's KEYCTL_GET_KEYRING_ID), and a socket of each family.
 */
const PROBE = `
import ctypes, errno, platform, socket
libc = ctypes.CDLL(None, use_errno=True)
keyctl = {"x86_64": 250, "aarch64": 219}[platform.machine()]
for name, ring in (("session", -3), ("user", -4)):
    if libc.syscall(keyctl, 0, ring, 0) >= 0:
        print(name, "keyring reached")
    else:
        print(name, "keyring refused", errno.errorcode[ctypes.get_errno()])
for name, family, kind in (
    ("vsock", 40, socket.SOCK_STREAM),
    ("alg", 38, socket.SOCK_SEQPACKET),
    ("inet", socket.AF_INET, socket.SOCK_STREAM),
    ("inet6", socket.AF_INET6, socket.SOCK_DGRAM),
    ("netlink", socket.AF_NETLINK, socket.SOCK_RAW),
    ("unix", socket.AF_UNIX, socket.SOCK_STREAM),
):
    try:
        socket.socket(family, kind).close()
        print(name, "socket made")
    except OSError as error:
        print(name, "socket refused", errno.errorcode.get(error.errno, error.errno))
`;

let project: SandboxProject;

beforeAll(() => {
  project = new SandboxProject();
});

afterAll(() => project.dispose());

const probe = () => `python3 - <<'EOF'\n${PROBE}\nEOF`;

describe("what the kernel shares past the sandbox's namespaces", () => {
  it("keeps the daemon's keyrings and the socket families no namespace confines out of reach", async () => {
    const outside = await project.shell(probe(), { sandbox: "off" });
    expect(outside.output).toContain("session keyring reached");

    const hosts = [
      { host: project.host(), network: "none" },
      { host: project.host(), network: "all" },
      { host: project.host(undefined, { unix_sockets: [`${project.root}/listed.sock`] }), network: "none" },
    ];
    for (const { host, network } of hosts) {
      const result = await project.shell(probe(), { host, sandbox: { network } });
      const listed = host === hosts[2]?.host;
      const label = `${network}, ${listed ? "unix sockets listed" : "filter whole"}`;
      expect(result.output, label).toContain("session keyring refused EPERM");
      expect(result.output, label).toContain("user keyring refused EPERM");
      expect(result.output, label).toContain("vsock socket refused EAFNOSUPPORT");
      expect(result.output, label).toContain("alg socket refused EAFNOSUPPORT");
      for (const made of ["inet", "inet6", "netlink"])
        expect(result.output, label).toContain(`${made} socket made`);
      expect(result.output, label).toContain(listed ? "unix socket made" : "unix socket refused EPERM");
    }
  });
});

describe("a user namespace inside the sandbox, as a packaged (non-root) daemon runs it", () => {
  it("cannot be made, so gives no power over the mounts that hide data_dir", async () => {
    const nobodys = projectForNobody();
    try {
      const policy = nobodys.host().policyFor({
        settings: { ...SandboxSettingsSchema.parse({}), unix_sockets: [] },
        workdir: nobodys.workdir,
        owner: "nested-namespace probe",
      });
      const key = `${nobodys.dataDirectory}/vault.key`;
      const script =
        `unshare -rm sh -c 'id -u; umount ${nobodys.dataDirectory}; cat ${key}; ` +
        `mkdir -p /tmp/m && mount --bind / /tmp/m && cat /tmp/m${key}; ` +
        `mount -t proc proc /proc; mount -o remount,rw /; echo tried' 2>&1`;
      const { ended } = await startAsNobody(policy, "/bin/sh", ["-c", script]);
      const output = await ended;
      // The seccomp filter refuses CLONE_NEWUSER: no root of its own namespace, no unmount, bind or remount.
      expect(output).toContain("unshare failed: Operation not permitted");
      expect(output).not.toContain("tried");
      expect(output).not.toContain(MARKERS.vaultKey);
    } finally {
      nobodys.dispose();
    }
  });
});

/** Says, for each of the kernel's global settings files, whether this process may write it (no write made). */
const SETTINGS_PROBE =
  "for file in /proc/sys/kernel/core_pattern /proc/sys/vm/drop_caches /proc/sysrq-trigger; do " +
  '[ -e "$file" ] || continue; if [ -w "$file" ]; then echo "$file writable"; else echo "$file refused"; fi; done; ' +
  'cat /proc/sys/kernel/ostype; grep -c " /proc/sys ro," /proc/self/mountinfo';

describe("the kernel's global settings under /proc, which a root daemon's uid 0 children could write", () => {
  it("are read-only in the sandbox: no core_pattern that runs a workdir script as root outside", async () => {
    const outside = await project.shell(SETTINGS_PROBE, { sandbox: "off" });
    // As root the same probe outside the sandbox finds them writable: the check can tell.
    if (process.geteuid?.() === 0) expect(outside.output).toContain("/proc/sys/kernel/core_pattern writable");

    for (const network of ["none", "all", ["example.com"]]) {
      const result = await project.shell(SETTINGS_PROBE, { sandbox: { network } });
      const label = JSON.stringify(network);
      expect(result.output, label).toContain("/proc/sys/kernel/core_pattern refused");
      expect(result.output, label).toContain("/proc/sys/vm/drop_caches refused");
      expect(result.output, label).not.toContain("writable");
      // Still readable, and bound read-only once over the sandbox's own /proc.
      expect(result.output, label).toMatch(/\nLinux\n1\n/);
    }
  });
});
