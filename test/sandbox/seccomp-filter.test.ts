import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { SandboxHost } from "../../src/sandbox/sandbox-host.js";
import { describeSandboxStatus, sandboxStatus } from "../../src/sandbox/sandbox-status.js";
import { seccompProgram, unixSocketsProgram } from "../../src/sandbox/seccomp-filter.js";
import { requireSeccompProgram, seccompShortfall } from "../../src/sandbox/seccomp-requirement.js";

const ARCH = { x86_64: 0xc000003e, i386: 0x40000003, aarch64: 0xc00000b7, arm: 0x40000028 };
const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const EAFNOSUPPORT = 0x00050061;
const ENOSYS = 0x00050026;
const KILL_PROCESS = 0x80000000;

/**
 * Runs a classic-BPF seccomp program the way the kernel does, on one system call: `arguments`
 * are 64-bit, as in `struct seccomp_data`. Only the instructions a seccomp filter may use.
 */
function evaluate(program: Buffer, arch: number, nr: number, args: bigint[] = []): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr | 0, 0);
  data.writeUInt32LE(arch, 4);
  args.forEach((value, index) => data.writeBigUInt64LE(value, 16 + index * 8));
  let accumulator = 0;
  for (let pc = 0; pc < program.length / 8;) {
    const code = program.readUInt16LE(pc * 8);
    const whenTrue = program.readUInt8(pc * 8 + 2);
    const whenFalse = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    pc += 1;
    switch (code) {
      case 0x20: // ld [k]
        accumulator = data.readUInt32LE(k);
        break;
      case 0x54: // and #k
        accumulator = (accumulator & k) >>> 0;
        break;
      case 0x15: // jeq #k
        pc += accumulator === k ? whenTrue : whenFalse;
        break;
      case 0x45: // jset #k
        pc += (accumulator & k) !== 0 ? whenTrue : whenFalse;
        break;
      case 0x06: // ret #k
        return k;
      default:
        throw new Error(`instruction ${code.toString(16)} at ${pc - 1}`);
    }
  }
  throw new Error("the program ran off its end");
}

const program = seccompProgram("x64") as Buffer;
const call = (arch: number, nr: number, ...args: bigint[]) => evaluate(program, arch, nr, args);

describe("the seccomp filter's program", () => {
  it("is a whole number of instructions, the same for x86_64 and aarch64, none for other machines", () => {
    expect(program.length % 8).toBe(0);
    // Far below the kernel's 4096; every jump within a section's 255 (the assembler checks).
    expect(program.length / 8).toBeLessThan(450);
    expect(seccompProgram("arm64")).toEqual(program);
    expect(seccompProgram("riscv64")).toBeUndefined();
    expect(seccompProgram("ppc64")).toBeUndefined();
  });

  it("on x86_64 refuses socket(AF_UNIX) whatever the upper bits say, and allows other families", () => {
    expect(call(ARCH.x86_64, 41, 1n, 1n)).toBe(EPERM);
    expect(call(ARCH.x86_64, 41, 0xffffffff_00000001n, 1n)).toBe(EPERM);
    expect(call(ARCH.x86_64, 41, 2n, 1n)).toBe(ALLOW); // AF_INET
    expect(call(ARCH.x86_64, 41, 10n, 2n)).toBe(ALLOW); // AF_INET6
    expect(call(ARCH.x86_64, 41, 16n, 3n)).toBe(ALLOW); // AF_NETLINK
    expect(call(ARCH.x86_64, 0)).toBe(ALLOW); // read
    expect(call(ARCH.x86_64, 42, 3n)).toBe(ALLOW); // connect: the socket never exists
  });

  it("refuses every socket family the network namespace does not confine, as if the kernel had none", () => {
    for (const family of [17n, 0xffffffff_00000002n]) expect(call(ARCH.x86_64, 41, family, 3n)).toBe(ALLOW);
    // AF_VSOCK reaches the hypervisor whatever the namespace; AF_ALG, AF_BLUETOOTH, AF_TIPC, AF_CAN…
    for (const family of [40n, 38n, 31n, 30n, 29n, 0n, 3n, 45n, 46n])
      expect(call(ARCH.x86_64, 41, family, 1n)).toBe(EAFNOSUPPORT);
    expect(call(ARCH.i386, 359, 40n, 1n)).toBe(EAFNOSUPPORT);
    expect(call(ARCH.aarch64, 198, 40n, 1n)).toBe(EAFNOSUPPORT);
    expect(call(ARCH.arm, 281, 38n, 5n)).toBe(EAFNOSUPPORT);
  });

  it("refuses socketpair of those families too, with or without unix sockets listed", () => {
    const listed = unixSocketsProgram("x64") as Buffer;
    for (const [arch, socketpair] of [
      [ARCH.x86_64, 53],
      [ARCH.i386, 360],
      [ARCH.aarch64, 199],
      [ARCH.arm, 288],
    ] as const) {
      // AF_VSOCK, AF_TIPC (which has pairs), AF_ALG; the kernel makes both sockets first.
      for (const family of [40n, 30n, 38n]) {
        expect(call(arch, socketpair, family, 1n), `${socketpair} ${family}`).toBe(EAFNOSUPPORT);
        expect(evaluate(listed, arch, socketpair, [family, 1n]), `${socketpair} ${family}`).toBe(
          EAFNOSUPPORT,
        );
      }
      expect(call(arch, socketpair, 2n, 1n)).toBe(ALLOW); // AF_INET: the kernel answers EOPNOTSUPP
      expect(call(arch, socketpair, 1n, 1n)).toBe(ALLOW);
      expect(evaluate(listed, arch, socketpair, [1n, 2n])).toBe(ALLOW);
    }
  });

  it("refuses the kernel's keyrings on every ABI: add_key, request_key, keyctl", () => {
    for (const number of [248, 249, 250]) expect(call(ARCH.x86_64, number)).toBe(EPERM);
    for (const number of [286, 287, 288]) expect(call(ARCH.i386, number)).toBe(EPERM);
    for (const number of [217, 218, 219]) expect(call(ARCH.aarch64, number)).toBe(EPERM);
    for (const number of [309, 310, 311]) expect(call(ARCH.arm, number)).toBe(EPERM);
    expect(call(ARCH.x86_64, 0x40000000 + 250)).toBe(EPERM);
  });

  it("with unix sockets listed, lets AF_UNIX and every unix socketpair through and refuses the rest as before", () => {
    const listed = unixSocketsProgram("x64") as Buffer;
    const listedCall = (arch: number, nr: number, ...args: bigint[]) => evaluate(listed, arch, nr, args);
    expect(unixSocketsProgram("arm64")).toEqual(listed);
    expect(unixSocketsProgram("riscv64")).toBeUndefined();
    expect(listedCall(ARCH.x86_64, 41, 1n, 1n)).toBe(ALLOW);
    expect(listedCall(ARCH.x86_64, 53, 1n, 2n)).toBe(ALLOW);
    expect(listedCall(ARCH.x86_64, 41, 2n, 1n)).toBe(ALLOW);
    expect(listedCall(ARCH.x86_64, 41, 40n, 1n)).toBe(EAFNOSUPPORT);
    expect(listedCall(ARCH.x86_64, 250)).toBe(EPERM);
    expect(listedCall(ARCH.x86_64, 425)).toBe(EPERM);
    expect(listedCall(ARCH.i386, 102, 1n)).toBe(EPERM);
    expect(listedCall(ARCH.aarch64, 199, 1n, 2n)).toBe(ALLOW);
    expect(listedCall(ARCH.aarch64, 219)).toBe(EPERM);
    expect(listedCall(0xc00000f3, 198, 1n)).toBe(KILL_PROCESS);
  });

  it("allows stream and seqpacket socketpairs (with their flags) and refuses datagram ones", () => {
    const nonblockCloexec = 0o4000n | 0o2000000n;
    expect(call(ARCH.x86_64, 53, 1n, 1n)).toBe(ALLOW);
    expect(call(ARCH.x86_64, 53, 1n, 1n | nonblockCloexec)).toBe(ALLOW);
    expect(call(ARCH.x86_64, 53, 1n, 5n)).toBe(ALLOW);
    expect(call(ARCH.x86_64, 53, 1n, 2n)).toBe(EPERM); // SOCK_DGRAM
    expect(call(ARCH.x86_64, 53, 1n, 2n | nonblockCloexec)).toBe(EPERM);
    expect(call(ARCH.x86_64, 53, 1n, 3n)).toBe(EPERM); // SOCK_RAW, a datagram socket for AF_UNIX
  });

  it("refuses io_uring and every x32 system call", () => {
    expect(call(ARCH.x86_64, 425)).toBe(EPERM);
    expect(call(ARCH.x86_64, 0x40000000 + 41, 1n)).toBe(EPERM);
    expect(call(ARCH.x86_64, 0x40000000 + 0)).toBe(EPERM);
  });

  it("for i386 programs refuses socketcall and socket(AF_UNIX), allows the rest", () => {
    expect(call(ARCH.i386, 102, 1n)).toBe(EPERM); // socketcall(SYS_SOCKET, …)
    expect(call(ARCH.i386, 102, 8n)).toBe(EPERM); // socketcall(SYS_SOCKETPAIR, …)
    expect(call(ARCH.i386, 359, 1n)).toBe(EPERM);
    expect(call(ARCH.i386, 359, 2n)).toBe(ALLOW);
    expect(call(ARCH.i386, 360, 1n, 2n)).toBe(EPERM);
    expect(call(ARCH.i386, 360, 1n, 1n)).toBe(ALLOW);
    expect(call(ARCH.i386, 425)).toBe(EPERM);
    expect(call(ARCH.i386, 41, 1n)).toBe(ALLOW); // i386's 41 is dup
  });

  it("on aarch64 and its arm compat refuses the same calls by their numbers", () => {
    expect(call(ARCH.aarch64, 198, 1n)).toBe(EPERM);
    expect(call(ARCH.aarch64, 198, 2n)).toBe(ALLOW);
    expect(call(ARCH.aarch64, 199, 1n, 2n)).toBe(EPERM);
    expect(call(ARCH.aarch64, 199, 1n, 1n)).toBe(ALLOW);
    expect(call(ARCH.aarch64, 425)).toBe(EPERM);
    expect(call(ARCH.aarch64, 41, 1n)).toBe(ALLOW);
    expect(call(ARCH.arm, 281, 1n)).toBe(EPERM);
    expect(call(ARCH.arm, 288, 1n, 2n)).toBe(EPERM);
    expect(call(ARCH.arm, 102)).toBe(EPERM);
    expect(call(ARCH.arm, 281, 2n)).toBe(ALLOW);
  });

  it("refuses the kernel's exploit primitives by each ABI's own numbers, with EPERM", () => {
    // perf_event_open, userfaultfd, bpf, syslog, setns, open_by_handle_at, finit_module, acct.
    const numbers = {
      x86_64: [298, 323, 321, 103, 308, 304, 313, 163, 154, 134],
      i386: [336, 374, 357, 103, 346, 342, 350, 51, 123, 86],
      aarch64: [241, 282, 280, 116, 268, 265, 273, 89],
      arm: [364, 388, 386, 103, 375, 371, 379, 51, 86],
    };
    const listed = unixSocketsProgram("x64") as Buffer;
    for (const [abi, list] of Object.entries(numbers)) {
      const arch = ARCH[abi as keyof typeof ARCH];
      for (const number of list) {
        expect(call(arch, number), `${abi} ${number}`).toBe(EPERM);
        expect(evaluate(listed, arch, number), `${abi} ${number}, sockets listed`).toBe(EPERM);
      }
    }
    expect(call(ARCH.x86_64, 0x40000000 + 298)).toBe(EPERM);
    expect(call(ARCH.aarch64, 154)).toBe(ALLOW); // aarch64's 154 is setpgid, not modify_ldt
  });

  it("answers ENOSYS for clone3 and the NUMA memory calls, as a kernel without them would", () => {
    // clone3, then mbind, get_mempolicy, set_mempolicy, migrate_pages, move_pages.
    const numbers = {
      x86_64: [435, 237, 239, 238, 256, 279, 450],
      i386: [435, 274, 275, 276, 294, 317, 450],
      aarch64: [435, 235, 236, 237, 238, 239, 450],
      arm: [435, 319, 320, 321, 400, 344, 450],
    };
    for (const [abi, list] of Object.entries(numbers))
      for (const number of list)
        expect(call(ARCH[abi as keyof typeof ARCH], number), `${abi} ${number}`).toBe(ENOSYS);
  });

  it("refuses new user namespaces through clone and unshare, and lets threads and forks through", () => {
    const CLONE_NEWUSER = 0x10000000n;
    const thread = 0x3d0f00n; // glibc's pthread_create flags
    const fork = 0x1200011n; // CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD
    for (const [arch, clone, unshare] of [
      [ARCH.x86_64, 56, 272],
      [ARCH.i386, 120, 310],
      [ARCH.aarch64, 220, 97],
      [ARCH.arm, 120, 337],
    ] as const) {
      expect(call(arch, clone, thread)).toBe(ALLOW);
      expect(call(arch, clone, fork)).toBe(ALLOW);
      expect(call(arch, clone, fork | CLONE_NEWUSER)).toBe(EPERM);
      expect(call(arch, unshare, CLONE_NEWUSER | 0x20000n)).toBe(EPERM);
      expect(call(arch, unshare, 0x200n)).toBe(ALLOW); // CLONE_FS
    }
  });

  it("refuses TIOCSTI, TIOCLINUX and TIOCSETD whatever the command's upper bits, and lets other ioctls through", () => {
    for (const [arch, ioctl] of [
      [ARCH.x86_64, 16],
      [ARCH.i386, 54],
      [ARCH.aarch64, 29],
      [ARCH.arm, 54],
    ] as const) {
      expect(call(arch, ioctl, 0n, 0x5412n)).toBe(EPERM);
      expect(call(arch, ioctl, 0n, 0xffffffff_00005412n)).toBe(EPERM);
      expect(call(arch, ioctl, 0n, 0x541cn)).toBe(EPERM);
      expect(call(arch, ioctl, 0n, 0x5423n)).toBe(EPERM); // TIOCSETD
      expect(call(arch, ioctl, 0n, 0xffffffff_00005423n)).toBe(EPERM);
      expect(call(arch, ioctl, 0n, 0x5424n)).toBe(ALLOW); // TIOCGETD
      expect(call(arch, ioctl, 0n, 0x5401n)).toBe(ALLOW); // TCGETS
      expect(call(arch, ioctl, 0n, 0x541bn)).toBe(ALLOW); // FIONREAD
    }
  });

  it("lets personality set Linux, 32-bit Linux and no randomization, or query, and nothing else", () => {
    for (const [arch, personality] of [
      [ARCH.x86_64, 135],
      [ARCH.i386, 136],
      [ARCH.aarch64, 92],
      [ARCH.arm, 136],
    ] as const) {
      for (const persona of [0n, 8n, 0x40000n, 0x40008n, 0xffffffffn])
        expect(call(arch, personality, persona), persona.toString(16)).toBe(ALLOW);
      // READ_IMPLIES_EXEC, MMAP_PAGE_ZERO, PER_SVR4, ADDR_COMPAT_LAYOUT
      for (const persona of [0x400000n, 0x100000n, 0x68000001n, 0x200000n])
        expect(call(arch, personality, persona), persona.toString(16)).toBe(EPERM);
    }
  });

  it("refuses a file made or changed with the set-user-ID or set-group-ID bit, by each ABI's numbers", () => {
    const O_CREAT = 0o100n;
    const O_TMPFILE = 0o20000000n | 0o200000n;
    const listed = unixSocketsProgram("x64") as Buffer;
    // [arch, openat, fchmod, fchmodat, mknodat], then [open, creat, chmod, mknod] where the ABI has them.
    const numbers: [number[], number[] | undefined][] = [
      [
        [ARCH.x86_64, 257, 91, 268, 259],
        [2, 85, 90, 133],
      ],
      [
        [ARCH.i386, 295, 94, 306, 297],
        [5, 8, 15, 14],
      ],
      [[ARCH.aarch64, 56, 52, 53, 33], undefined],
      [
        [ARCH.arm, 322, 94, 333, 324],
        [5, 8, 15, 14],
      ],
    ];
    for (const [[arch = 0, openat = 0, fchmod = 0, fchmodat = 0, mknodat = 0], pathCalls] of numbers) {
      const [open = 0, creat = 0, chmod = 0, mknod = 0] = pathCalls ?? [];
      const label = arch.toString(16);
      for (const filter of [program, listed]) {
        const at = (nr: number, ...args: bigint[]) => evaluate(filter, arch, nr, args);
        for (const mode of [0o4755n, 0o2755n, 0o6777n]) {
          expect(at(openat, 0n, 0n, O_CREAT | 1n, mode), label).toBe(EPERM);
          expect(at(openat, 0n, 0n, O_TMPFILE | 2n, mode), label).toBe(EPERM);
          expect(at(fchmod, 3n, mode), label).toBe(EPERM);
          expect(at(fchmodat, 0n, 0n, mode), label).toBe(EPERM);
          expect(at(452, 0n, 0n, mode, 0n), label).toBe(EPERM); // fchmodat2
          expect(at(mknodat, 0n, 0n, 0o100000n | mode, 0n), label).toBe(EPERM);
          if (pathCalls !== undefined) {
            expect(at(open, 0n, O_CREAT, mode), label).toBe(EPERM);
            expect(at(creat, 0n, mode), label).toBe(EPERM);
            expect(at(chmod, 0n, mode), label).toBe(EPERM);
            expect(at(mknod, 0n, 0o100000n | mode, 0n), label).toBe(EPERM);
          }
        }
        // Ordinary modes, the sticky bit, and an open that makes nothing whatever its mode says.
        for (const mode of [0o755n, 0o1777n, 0o600n]) {
          expect(at(openat, 0n, 0n, O_CREAT | 1n, mode), label).toBe(ALLOW);
          expect(at(fchmod, 3n, mode), label).toBe(ALLOW);
          expect(at(fchmodat, 0n, 0n, mode), label).toBe(ALLOW);
          if (pathCalls !== undefined) expect(at(chmod, 0n, mode), label).toBe(ALLOW);
        }
        expect(at(openat, 0n, 0n, 0n, 0o4755n), label).toBe(ALLOW);
        if (pathCalls !== undefined) expect(at(open, 0n, 2n, 0o4755n), label).toBe(ALLOW);
        expect(at(437, 0n, 0n, 0n, 24n), `openat2 ${label}`).toBe(ENOSYS);
      }
    }
  });

  it("kills a process that calls in through an architecture it does not know", () => {
    expect(call(0xc00000f3, 198, 1n)).toBe(KILL_PROCESS); // riscv64
    expect(call(0, 0)).toBe(KILL_PROCESS);
  });
});

describe("on a machine the filter does not know", () => {
  it("refuses to sandbox with SANDBOX_UNAVAILABLE, saying what to do", () => {
    let thrown: unknown;
    try {
      requireSeccompProgram('agent "notes"', "riscv64");
    } catch (error) {
      thrown = error;
    }
    expect(AgentdError.is(thrown, "SANDBOX_UNAVAILABLE")).toBe(true);
    const error = thrown as AgentdError;
    expect(error.message).toContain('cannot sandbox agent "notes"');
    expect(error.message).toContain("riscv64");
    expect(error.hint).toContain("sandbox.unix_sockets");
    expect(error.hint).toContain("x86_64 or aarch64");
  });

  it("is reported by agentd validate and the start-up summary as no sandbox, unless sockets are listed", () => {
    const config = ConfigSchema.parse({ data_dir: "/nonexistent/data" });
    if (!new SandboxHost({ config }).availability().available) return; // no bubblewrap here at all
    const riscv = new SandboxHost({ config, architecture: "riscv64" });
    const status = sandboxStatus(riscv.availability(), "workspace-write");
    expect(status.works).toBe(false);
    expect(describeSandboxStatus(status)).toContain("riscv64");
    expect(describeSandboxStatus(status)).toContain("sandbox.unix_sockets");
    const listed = ConfigSchema.parse({
      data_dir: "/nonexistent/data",
      sandbox: { unix_sockets: ["/a.sock"] },
    });
    expect(new SandboxHost({ config: listed, architecture: "riscv64" }).availability().available).toBe(true);
  });

  it("needs no filter when config lists unix sockets (they turn it off)", () => {
    expect(seccompShortfall([], "riscv64")).toBeDefined();
    expect(seccompShortfall(["/run/user/1000/bus"], "riscv64")).toBeUndefined();
    expect(seccompShortfall([], "x64")).toBeUndefined();
  });
});
