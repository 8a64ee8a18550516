import os from "node:os";
import { ABI_SYSTEM_CALLS, type AbiSystemCalls, type ModeSettingCall } from "./seccomp-system-calls.js";

/**
 * The seccomp filter every sandboxed child runs under: a classic-BPF program, in the binary form
 * bubblewrap's `--seccomp FD` reads (an array of `struct sock_filter`), that keeps a sandboxed
 * process from making a unix socket (so from connecting to any of the host's: the D-Bus buses, an
 * ssh or gpg agent, X11, docker, systemd — unix sockets are not in the network namespace, and the
 * services behind them trust the uid the sandbox shares), and away from the kernel interfaces
 * that are ways out past the namespaces or classic exploit primitives, which no agent workload
 * (git, node, python, compilers, a headless browser, test runners) needs.
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
 *   and shells use, are already connected and cannot be pointed elsewhere. `socketpair` of a
 *   family socket refuses is refused as socket refuses it (the kernel makes both sockets of the
 *   family before it asks for a pair).
 * - `add_key`, `request_key` and `keyctl`, with EPERM: the kernel's keyrings are not namespaced by
 *   bubblewrap. A sandboxed process would otherwise share the daemon's session keyring (and, with
 *   a daemon running as root, root's user keyring): read the credentials kept there (Kerberos
 *   tickets, cached disk passphrases, `keyctl`-stored tokens) and plant keys the daemon would find.
 * - `io_uring_setup`, with EPERM: io_uring's socket and connect operations run without passing
 *   through this filter.
 * - new user namespaces — `unshare` or `clone` with CLONE_NEWUSER — with EPERM, and `setns`: in a
 *   user namespace of its own a process holds every capability over the namespaces it makes, and
 *   so reaches the kernel code behind them (netfilter, mount, the namespaced sysctls) that the
 *   sandbox's dropped capabilities otherwise keep it from: most kernel privilege escalations of
 *   recent years start there. `clone3`, whose flags are in memory a filter cannot read, is refused
 *   with ENOSYS, on which glibc, Rust and Go fall back to `clone`.
 * - `perf_event_open`, `userfaultfd` and `bpf`, with EPERM (what a kernel configured against
 *   unprivileged use answers): the first two are the staples of kernel exploits (a side channel
 *   into kernel addresses; a way to stop the kernel mid-copy to win a race), the third a
 *   verifier-guarded JIT in the kernel. Only profilers and checkpointing tools use them.
 * - `syslog` (the kernel log: kernel addresses, and every other process's messages), `uselib`
 *   (the a.out loader), `modify_ldt` (16-bit segments: a history of leaks), `acct`,
 *   `quotactl`/`quotactl_fd`, `open_by_handle_at` (opens any inode of a mounted filesystem by its
 *   handle, past the mounts that hide paths), `kexec_load`/`kexec_file_load` and
 *   `init_module`/`finit_module`/`delete_module`, with EPERM. The last ones need a capability the
 *   sandbox drops; refusing them here keeps them refused should one ever leak in.
 * - `ioctl` TIOCSTI (push characters into a terminal's input) and TIOCLINUX (the console's
 *   selection), with EPERM, comparing the low 32 bits only, as the kernel reads the command. A
 *   sandbox has no controlling terminal (bubblewrap's `--new-session`), so this refuses what
 *   would be harmless now, and stays so if a terminal is ever passed in. And TIOCSETD, which
 *   attaches a line discipline to a terminal: a sandbox can open a pseudo-terminal of its own
 *   (`/dev/ptmx`), and the disciplines (n_gsm, n_hdlc…, loaded on demand where
 *   `dev.tty.ldisc_autoload` is on) are a history of kernel privilege escalations; only modem and
 *   serial-line tools (pppd, slattach) set one.
 * - `personality` other than PER_LINUX and PER_LINUX32, with or without ADDR_NO_RANDOMIZE (what
 *   `setarch -R`, debuggers and some build tools use), or the query 0xffffffff, with EPERM: the
 *   other personas (READ_IMPLIES_EXEC, MMAP_PAGE_ZERO…) weaken memory protections or are only for
 *   foreign binaries.
 * - `mbind`, `get_mempolicy`, `set_mempolicy`, `set_mempolicy_home_node`, `migrate_pages` and
 *   `move_pages`, with ENOSYS, as on a kernel without NUMA, which libnuma, the JVM and BLAS
 *   libraries detect and do without: they place or query the memory of any process the caller may
 *   trace, kernel code nothing in a sandbox needs.
 * - on x86_64, every system call of the x32 ABI (number | 0x40000000), which has its own numbers
 *   for all of the above; and for the i386 compat ABI (`int 0x80`, 32-bit programs) its numbers of
 *   the same calls, and `socketcall`, the old multiplexer that hides the socket call in memory a
 *   filter cannot read. On aarch64, the 32-bit arm compat ABI likewise.
 * - a file made or changed with the set-user-ID or set-group-ID bit — `open`/`openat`/`creat` with
 *   O_CREAT or O_TMPFILE, `chmod`/`fchmod`/`fchmodat`/`fchmodat2`, `mknod`/`mknodat` whose mode
 *   has S_ISUID or S_ISGID — with EPERM, as systemd's RestrictSUIDSGID= does; and `openat2`, whose
 *   mode sits in memory, with ENOSYS (programs fall back to `openat`). The sandbox's own mounts are
 *   nosuid, the workdir's and `write:` paths' folders on the host are not: a command could leave
 *   there a copy of a shell that runs as the daemon's user (root, for a daemon running as root) for
 *   whoever on the machine starts it.
 * - a system call of an architecture the program does not know is not refused but kills the
 *   process: on x86_64 and aarch64 kernels the four above are all there is.
 *
 * When config lists unix sockets (`sandbox.unix_sockets`), the filter lets AF_UNIX sockets and
 * every AF_UNIX socketpair through and refuses the rest as above (unixSocketsProgram).
 *
 * The program is the same bytes on both machines (it tests `seccomp_data.arch` first); only the
 * byte order is the host's, and both are little-endian. Only the calls it looks at the arguments
 * of (socket, socketpair, ioctl, personality, clone, unshare, the open and chmod calls) run more than its first few
 * instructions: the kernel (5.11 and later) remembers, per system call, that the filter allows it
 * whatever its arguments, and does not run the filter for those again.
 */
/** `process.arch` values the filter is built and tested for. */
export const SECCOMP_ARCHITECTURES: readonly string[] = ["x64", "arm64"];

// struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** The low 32 bits of args[0] and args[1] (little-endian). */
const OFFSET_ARGUMENT_0 = 16;
const OFFSET_ARGUMENT_1 = 24;
/** The low 32 bits of args[index]. */
const argumentOffset = (index: number) => OFFSET_ARGUMENT_0 + 8 * index;

const AF_UNIX = 1;
/** The families the network namespace confines: IPv4, IPv6, netlink, packet. */
const CONFINED_FAMILIES = [2, 10, 16, 17];
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
/** `type` of socket/socketpair also carries SOCK_NONBLOCK and SOCK_CLOEXEC: the type is these bits. */
const SOCK_TYPE_MASK = 0xf;
/** The ioctl commands refused: TIOCSTI, TIOCLINUX, TIOCSETD (the kernel reads the command as 32 bits). */
const REFUSED_IOCTLS = [0x5412, 0x541c, 0x5423];
/** PER_LINUX and PER_LINUX32, each with and without ADDR_NO_RANDOMIZE, and the query. */
const ALLOWED_PERSONALITIES = [0x0, 0x8, 0x40000, 0x40008, 0xffffffff];
const CLONE_NEWUSER = 0x10000000;
/** O_CREAT and __O_TMPFILE (the same on x86, the generic table and arm): an open that makes a file. */
const CREATING_OPEN_FLAGS = 0o100 | 0o20000000;
/** S_ISUID and S_ISGID. */
const SET_ID_BITS = 0o4000 | 0o2000;
const EPERM = 1;
const ENOSYS = 38;
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

/** One instruction, its jumps still naming labels; a label marks the next instruction. */
type Step = { label: string } | { code: number; value: number; whenTrue?: string; whenFalse?: string };

const load = (offset: number): Step => ({ code: LOAD_WORD_ABSOLUTE, value: offset });
const and = (mask: number): Step => ({ code: AND_CONSTANT, value: mask });
const give = (action: number): Step => ({ code: RETURN_CONSTANT, value: action });
/** Jumps to `label` when the accumulator equals `value`, else goes on with the next step. */
const jumpIfEqual = (value: number, label: string): Step => ({ code: JUMP_IF_EQUAL, value, whenTrue: label });
/** Goes on with the next step when the accumulator equals `value`, else jumps to `label`. */
const jumpUnlessEqual = (value: number, label: string): Step => ({
  code: JUMP_IF_EQUAL,
  value,
  whenFalse: label,
});
const jumpIfBitsSet = (bits: number, label: string): Step => ({
  code: JUMP_IF_BITS_SET,
  value: bits,
  whenTrue: label,
});
/** Goes on with the next step when the accumulator has one of `bits`, else jumps to `label`. */
const jumpUnlessBitsSet = (bits: number, label: string): Step => ({
  code: JUMP_IF_BITS_SET,
  value: bits,
  whenFalse: label,
});

/**
 * One section per ABI, each entered when `seccomp_data.arch` is its own and ending in its own
 * returns (a classic-BPF jump reaches 255 instructions at most, so a section never jumps into
 * another); an arch that no section claims is killed. `unixSockets`: config lists host sockets,
 * so AF_UNIX sockets and every AF_UNIX socketpair pass.
 */
function filterSteps(unixSockets: boolean): Step[] {
  const steps: Step[] = [];
  for (const [name, abi] of Object.entries(ABI_SYSTEM_CALLS)) {
    steps.push({ label: name }, load(OFFSET_ARCH), jumpUnlessEqual(abi.arch, `${name} end`));
    steps.push(...sectionSteps(abi, unixSockets, (label) => `${name} ${label}`), { label: `${name} end` });
  }
  steps.push(give(RET_KILL_PROCESS));
  return steps;
}

/** The steps of one ABI's section; `local` names its labels. */
function sectionSteps(abi: AbiSystemCalls, unixSockets: boolean, local: (label: string) => string): Step[] {
  const steps: Step[] = [load(OFFSET_NR)];
  if (abi.refusedNumberBits !== undefined) steps.push(jumpIfBitsSet(abi.refusedNumberBits, local("refuse")));
  // The calls whose arguments are looked at come first: the kernel runs the filter for them on
  // every call (it remembers the others' answer), the refused ones are rare.
  const [openat, ...otherModeSetting] = abi.modeSetting;
  if (openat !== undefined) steps.push(jumpIfEqual(openat.number, local(modeCheck(openat))));
  steps.push(
    jumpIfEqual(abi.ioctl, local("ioctl")),
    jumpIfEqual(abi.clone, local("namespaces")),
    jumpIfEqual(abi.socket, local("socket")),
    jumpIfEqual(abi.socketpair, local("socketpair")),
    jumpIfEqual(abi.personality, local("personality")),
    jumpIfEqual(abi.unshare, local("namespaces")),
  );
  for (const call of otherModeSetting) steps.push(jumpIfEqual(call.number, local(modeCheck(call))));
  for (const number of abi.refused) steps.push(jumpIfEqual(number, local("refuse")));
  for (const number of abi.absent) steps.push(jumpIfEqual(number, local("absent")));
  steps.push(give(RET_ALLOW));
  steps.push({ label: local("socket") }, load(OFFSET_ARGUMENT_0));
  for (const family of CONFINED_FAMILIES) steps.push(jumpIfEqual(family, local("allow")));
  steps.push(jumpIfEqual(AF_UNIX, local(unixSockets ? "allow" : "refuse")), give(RET_ERRNO | EAFNOSUPPORT));
  // socketpair makes its two sockets (the family's kernel code runs) before it asks the family
  // for a pair: its family is checked as socket's is.
  steps.push({ label: local("socketpair") }, load(OFFSET_ARGUMENT_0));
  for (const family of CONFINED_FAMILIES) steps.push(jumpIfEqual(family, local("allow")));
  if (unixSockets) steps.push(jumpIfEqual(AF_UNIX, local("allow")), give(RET_ERRNO | EAFNOSUPPORT));
  else {
    steps.push(
      jumpUnlessEqual(AF_UNIX, local("no family")),
      load(OFFSET_ARGUMENT_1),
      and(SOCK_TYPE_MASK),
      jumpIfEqual(SOCK_STREAM, local("allow")),
      jumpIfEqual(SOCK_SEQPACKET, local("allow")),
      give(RET_ERRNO | EPERM),
      { label: local("no family") },
      give(RET_ERRNO | EAFNOSUPPORT),
    );
  }
  steps.push({ label: local("ioctl") }, load(OFFSET_ARGUMENT_1));
  for (const command of REFUSED_IOCTLS) steps.push(jumpIfEqual(command, local("refuse")));
  steps.push(give(RET_ALLOW), { label: local("personality") }, load(OFFSET_ARGUMENT_0));
  for (const persona of ALLOWED_PERSONALITIES) steps.push(jumpIfEqual(persona, local("allow")));
  steps.push(give(RET_ERRNO | EPERM), { label: local("namespaces") }, load(OFFSET_ARGUMENT_0));
  steps.push(jumpIfBitsSet(CLONE_NEWUSER, local("refuse")), give(RET_ALLOW));
  // A file made or changed with the set-user-ID or set-group-ID bit: an open without O_CREAT or
  // O_TMPFILE makes none, whatever its mode argument holds. Calls with their flags and mode in the
  // same places share one check.
  const checks = new Map(abi.modeSetting.map((call) => [modeCheck(call), call]));
  for (const [label, call] of checks) {
    steps.push({ label: local(label) });
    if (call.flags !== undefined)
      steps.push(load(argumentOffset(call.flags)), jumpUnlessBitsSet(CREATING_OPEN_FLAGS, local("allow")));
    steps.push(load(argumentOffset(call.mode)), jumpIfBitsSet(SET_ID_BITS, local("refuse")), give(RET_ALLOW));
  }
  steps.push({ label: local("refuse") }, give(RET_ERRNO | EPERM));
  steps.push({ label: local("absent") }, give(RET_ERRNO | ENOSYS));
  steps.push({ label: local("allow") }, give(RET_ALLOW));
  return steps;
}

/** The label of the check of a call that sets a mode: the same for calls with the same arguments. */
function modeCheck(call: ModeSettingCall): string {
  return `mode ${call.flags ?? "-"} ${call.mode}`;
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
