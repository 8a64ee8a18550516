import os from "node:os";

/**
 * The seccomp filter every sandboxed child runs under (unless config lists unix sockets): a
 * classic-BPF program, in the binary form bubblewrap's `--seccomp FD` reads (an array of
 * `struct sock_filter`), that keeps a sandboxed process from making a unix socket and so from
 * connecting to any of the host's (the D-Bus buses, an ssh or gpg agent, X11, docker, systemd):
 * unix sockets are not in the network namespace, and the services behind them trust the uid the
 * sandbox shares.
 *
 * What it refuses (every other system call is allowed):
 * - `socket(AF_UNIX, …)`, with EPERM: the one way to make a socket that can connect to a path or
 *   an abstract name.
 * - `socket` of every family but AF_INET, AF_INET6, AF_NETLINK and AF_PACKET, with EAFNOSUPPORT
 *   (as if the kernel had none): those four are what the network namespace confines. A family it
 *   does not confine is a way out of `network: none` — AF_VSOCK reaches the hypervisor and the
 *   virtual machine's own services whatever the namespace — and the rest (AF_ALG, AF_BLUETOOTH,
 *   AF_TIPC…) is kernel code no agent needs.
 * - `socketpair` of a type other than SOCK_STREAM or SOCK_SEQPACKET, with EPERM: a datagram pair
 *   can be re-connected (or sent from) to any datagram socket by name. Stream pairs, which libuv
 *   and shells use, are already connected and cannot be pointed elsewhere.
 * - `add_key`, `request_key` and `keyctl`, with EPERM: the kernel's keyrings are not namespaced by
 *   bubblewrap. A sandboxed process would otherwise share the daemon's session keyring (and, with
 *   a daemon running as root, root's user keyring): read the credentials kept there (Kerberos
 *   tickets, cached disk passphrases, `keyctl`-stored tokens) and plant keys the daemon would find.
 * - `io_uring_setup`, with EPERM: io_uring's socket and connect operations run without passing
 *   through this filter.
 * - on x86_64, every system call of the x32 ABI (number | 0x40000000), which has its own numbers
 *   for all of the above; and for the i386 compat ABI (`int 0x80`, 32-bit programs) its numbers of
 *   the same calls, and `socketcall`, the old multiplexer that hides the socket call in memory a
 *   filter cannot read. On aarch64, the 32-bit arm compat ABI likewise.
 * - a system call of an architecture the program does not know is not refused but kills the
 *   process: on x86_64 and aarch64 kernels the four above are all there is.
 *
 * When config lists unix sockets (`sandbox.unix_sockets`), the filter lets AF_UNIX sockets and
 * every socketpair through and refuses the rest as above (unixSocketsProgram).
 *
 * The program is the same bytes on both machines (it tests `seccomp_data.arch` first); only the
 * byte order is the host's, and both are little-endian.
 */

/** `process.arch` values the filter is built and tested for. */
export const SECCOMP_ARCHITECTURES: readonly string[] = ["x64", "arm64"];

// struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** The low 32 bits of args[0] and args[1] (little-endian): the kernel reads both as `int`. */
const OFFSET_ARGUMENT_0 = 16;
const OFFSET_ARGUMENT_1 = 24;

// AUDIT_ARCH_* from <linux/audit.h>.
const ARCH_X86_64 = 0xc000003e;
const ARCH_I386 = 0x40000003;
const ARCH_AARCH64 = 0xc00000b7;
const ARCH_ARM = 0x40000028;
/** x32 system calls are x86_64's arch with this bit set in the number. */
const X32_SYSCALL_BIT = 0x40000000;

const AF_UNIX = 1;
/** The families the network namespace confines: IPv4, IPv6, netlink, packet. */
const CONFINED_FAMILIES = [2, 10, 16, 17];
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
/** `type` of socket/socketpair also carries SOCK_NONBLOCK and SOCK_CLOEXEC: the type is these bits. */
const SOCK_TYPE_MASK = 0xf;
const EPERM = 1;
const EAFNOSUPPORT = 97;

const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const RET_KILL_PROCESS = 0x80000000;

// Classic BPF opcodes (<linux/bpf_common.h>): class | size | mode | op | source.
const LOAD_WORD_ABSOLUTE = 0x00 | 0x00 | 0x20; // BPF_LD | BPF_W | BPF_ABS
const AND_CONSTANT = 0x04 | 0x50 | 0x00; // BPF_ALU | BPF_AND | BPF_K
const JUMP_IF_EQUAL = 0x05 | 0x10 | 0x00; // BPF_JMP | BPF_JEQ | BPF_K
const JUMP_IF_BITS_SET = 0x05 | 0x40 | 0x00; // BPF_JMP | BPF_JSET | BPF_K
const RETURN_CONSTANT = 0x06 | 0x00; // BPF_RET | BPF_K

/** System call numbers of one ABI, and what the filter does with them. */
interface AbiRules {
  arch: number;
  /** Refuse every call whose number has these bits set (x32 within x86_64's arch). */
  refusedNumberBits?: number;
  socket: number;
  socketpair: number;
  /** Calls refused whatever their arguments: io_uring_setup, the keyring calls, socketcall. */
  refused: number[];
}

const IO_URING_SETUP = 425; // the same number on every ABI since 5.1
const ABIS: Record<string, AbiRules> = {
  // 248-250: add_key, request_key, keyctl.
  x86_64: {
    arch: ARCH_X86_64,
    refusedNumberBits: X32_SYSCALL_BIT,
    socket: 41,
    socketpair: 53,
    refused: [IO_URING_SETUP, 248, 249, 250],
  },
  // 102: socketcall; 286-288: add_key, request_key, keyctl.
  i386: { arch: ARCH_I386, socket: 359, socketpair: 360, refused: [102, IO_URING_SETUP, 286, 287, 288] },
  // 217-219: add_key, request_key, keyctl.
  aarch64: { arch: ARCH_AARCH64, socket: 198, socketpair: 199, refused: [IO_URING_SETUP, 217, 218, 219] },
  // 102: socketcall; 309-311: add_key, request_key, keyctl.
  arm: { arch: ARCH_ARM, socket: 281, socketpair: 288, refused: [102, IO_URING_SETUP, 309, 310, 311] },
};

/** One instruction, its jumps still naming labels; a label marks the next instruction. */
type Step = { label: string } | { code: number; value: number; whenTrue?: string; whenFalse?: string };

const load = (offset: number): Step => ({ code: LOAD_WORD_ABSOLUTE, value: offset });
const and = (mask: number): Step => ({ code: AND_CONSTANT, value: mask });
const give = (action: number): Step => ({ code: RETURN_CONSTANT, value: action });
/** Jumps to `label` when the accumulator equals `value`, else goes on with the next step. */
const jumpIfEqual = (value: number, label: string): Step => ({ code: JUMP_IF_EQUAL, value, whenTrue: label });
const jumpIfBitsSet = (bits: number, label: string): Step => ({
  code: JUMP_IF_BITS_SET,
  value: bits,
  whenTrue: label,
});

/** `unixSockets`: config lists host sockets, so AF_UNIX sockets and every socketpair pass. */
function filterSteps(unixSockets: boolean): Step[] {
  const steps: Step[] = [load(OFFSET_ARCH)];
  for (const name of Object.keys(ABIS)) steps.push(jumpIfEqual((ABIS[name] as AbiRules).arch, name));
  steps.push(give(RET_KILL_PROCESS));
  for (const [name, abi] of Object.entries(ABIS)) {
    steps.push({ label: name }, load(OFFSET_NR));
    if (abi.refusedNumberBits !== undefined) steps.push(jumpIfBitsSet(abi.refusedNumberBits, "refuse"));
    for (const number of abi.refused) steps.push(jumpIfEqual(number, "refuse"));
    steps.push(jumpIfEqual(abi.socket, "socket"));
    if (!unixSockets) steps.push(jumpIfEqual(abi.socketpair, "socketpair"));
    steps.push(give(RET_ALLOW));
  }
  steps.push({ label: "socket" }, load(OFFSET_ARGUMENT_0));
  for (const family of CONFINED_FAMILIES) steps.push(jumpIfEqual(family, "allow"));
  steps.push(jumpIfEqual(AF_UNIX, unixSockets ? "allow" : "refuse"), give(RET_ERRNO | EAFNOSUPPORT));
  if (!unixSockets) {
    steps.push(
      { label: "socketpair" },
      load(OFFSET_ARGUMENT_1),
      and(SOCK_TYPE_MASK),
      jumpIfEqual(SOCK_STREAM, "allow"),
      jumpIfEqual(SOCK_SEQPACKET, "allow"),
    );
  }
  steps.push({ label: "refuse" }, give(RET_ERRNO | EPERM), { label: "allow" }, give(RET_ALLOW));
  return steps;
}

/**
 * Resolves the labels (a classic-BPF jump is an offset, 0–255, from the next instruction, forward
 * only) and writes each instruction as `struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }`.
 */
function assemble(steps: readonly Step[]): Buffer {
  const positions = new Map<string, number>();
  let count = 0;
  for (const step of steps) {
    if ("label" in step) positions.set(step.label, count);
    else count += 1;
  }
  const program = Buffer.alloc(count * 8);
  let index = 0;
  const offsetTo = (label: string | undefined): number => {
    if (label === undefined) return 0;
    const target = positions.get(label);
    const offset = target === undefined ? -1 : target - index - 1;
    if (offset < 0 || offset > 255) throw new Error(`seccomp filter: cannot jump to ${label}`);
    return offset;
  };
  for (const step of steps) {
    if ("label" in step) continue;
    const at = index * 8;
    program.writeUInt16LE(step.code, at);
    program.writeUInt8(offsetTo(step.whenTrue), at + 2);
    program.writeUInt8(offsetTo(step.whenFalse), at + 3);
    program.writeUInt32LE(step.value >>> 0, at + 4);
    index += 1;
  }
  return program;
}

const programs = new Map<boolean, Buffer>();

function builtProgram(architecture: string, unixSockets: boolean): Buffer | undefined {
  if (!SECCOMP_ARCHITECTURES.includes(architecture) || os.endianness() !== "LE") return undefined;
  let program = programs.get(unixSockets);
  if (program === undefined) {
    program = assemble(filterSteps(unixSockets));
    programs.set(unixSockets, program);
  }
  return program;
}

/**
 * The filter's bytes for a machine of `architecture` (`process.arch`), or undefined when it does
 * not know that machine (the caller must then refuse to run sandboxed children, or run them
 * without the filter only where config says so).
 */
export function seccompProgram(architecture: string = process.arch): Buffer | undefined {
  return builtProgram(architecture, false);
}

/**
 * The filter for a daemon whose config lists unix sockets: AF_UNIX sockets and socketpairs pass,
 * everything else is refused as by seccompProgram. Undefined on a machine it does not know, where
 * such children run without a filter.
 */
export function unixSocketsProgram(architecture: string = process.arch): Buffer | undefined {
  return builtProgram(architecture, true);
}
