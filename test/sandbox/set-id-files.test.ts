import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SandboxProject } from "./sandbox-project.js";

/**
 * Every way a command has to leave a set-user-ID or set-group-ID file in its workdir, one
 * `name: ok|ERRNO` line each. The sandbox's mounts are nosuid, the workdir's folder on the host is
 * not: such a file would run as the daemon's user (root, for a daemon running as root) for anyone
 * on the machine who starts it.
 */
const PROBE = String.raw`
import ctypes, errno, os, platform, stat
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, action):
    try:
        action()
        print(name + ": ok")
    except OSError as error:
        print(name + ": " + errno.errorcode.get(error.errno, str(error.errno)))
def syscall(*args):
    if libc.syscall(*args) < 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
def copy(name):
    with open("/bin/sh", "rb") as source, open(name, "wb") as target:
        target.write(source.read())
    return name
attempt("chmod u+s", lambda: os.chmod(copy("by-chmod"), 0o4755))
attempt("chmod g+s", lambda: os.chmod(copy("by-chmod-group"), 0o2755))
attempt("fchmod u+s", lambda: os.fchmod(os.open(copy("by-fchmod"), os.O_RDONLY), 0o4755))
attempt("open O_CREAT 4755", lambda: os.close(os.open("by-open", os.O_CREAT | os.O_WRONLY, 0o4755)))
attempt("mknod 4755", lambda: os.mknod("by-mknod", stat.S_IFREG | 0o4755))
fchmodat2 = 452
path = copy("by-fchmodat2").encode()
attempt("fchmodat2 u+s", lambda: syscall(fchmodat2, -100, path, 0o4755, 0))
openat2 = 437
attempt("openat2", lambda: syscall(openat2, -100, b"by-openat2", b"\0" * 24, 24))
attempt("chmod 755", lambda: os.chmod(copy("plain"), 0o755))
attempt("open O_RDONLY mode 4755", lambda: os.close(os.open("plain", os.O_RDONLY, 0o4755)))
os.mkdir("shared")
attempt("chmod 1777 folder", lambda: os.chmod("shared", 0o1777))
`;

let project: SandboxProject | undefined;
afterEach(() => {
  project?.dispose();
  project = undefined;
});

function outcomes(output: string): Map<string, string> {
  const lines = output.split("\n").filter((line) => line.includes(": "));
  return new Map(lines.map((line) => line.split(": ", 2) as [string, string]));
}

/** The workdir's entries whose mode has S_ISUID or S_ISGID, as the host sees them. */
function setIdEntries(folder: string): string[] {
  return readdirSync(folder).filter((name) => (statSync(path.join(folder, name)).mode & 0o6000) !== 0);
}

const run = (sandboxProject: SandboxProject, sandbox?: unknown) =>
  sandboxProject.shell(`python3 - <<'EOF'\n${PROBE}\nEOF`, sandbox === undefined ? {} : { sandbox });

describe("a set-user-ID or set-group-ID file made in the workdir", () => {
  it("is refused in every way, while ordinary modes and the sticky bit still work", async () => {
    // Outside the sandbox the same probe makes them: the check can tell.
    project = new SandboxProject();
    const outside = outcomes((await run(project, "off")).output);
    expect(outside.get("chmod u+s")).toBe("ok");
    expect(outside.get("open O_CREAT 4755")).toBe("ok");
    expect(setIdEntries(project.workdir)).toContain("by-chmod");
    project.dispose();

    for (const sandbox of [undefined, { network: ["example.com"] }]) {
      project = new SandboxProject();
      const label = JSON.stringify(sandbox);
      const inside = outcomes((await run(project, sandbox)).output);
      for (const name of ["chmod u+s", "chmod g+s", "fchmod u+s", "open O_CREAT 4755", "mknod 4755"])
        expect(inside.get(name), `${name} ${label}`).toBe("EPERM");
      expect(["EPERM", "ENOSYS"], `fchmodat2 ${label}`).toContain(inside.get("fchmodat2 u+s"));
      expect(inside.get("openat2"), label).toBe("ENOSYS");
      for (const name of ["chmod 755", "open O_RDONLY mode 4755", "chmod 1777 folder"])
        expect(inside.get(name), `${name} ${label}`).toBe("ok");
      expect(setIdEntries(project.workdir), label).toEqual([]);
      expect(statSync(path.join(project.workdir, "plain")).mode & 0o777).toBe(0o755);
      project.dispose();
      project = undefined;
    }
  });
});
