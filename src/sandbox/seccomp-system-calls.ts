/**
 * The system-call numbers the seccomp filter looks at, per ABI (from the kernel's tables: x86_64's
 * syscall_64.tbl, i386's syscall_32.tbl, the generic table aarch64 uses, arm's EABI table), and
 * what it does with each. Why each is refused is said in seccomp-filter.ts and docs/sandbox.md.
 */
export interface AbiSystemCalls {
  /** AUDIT_ARCH_* of `struct seccomp_data`. */
  arch: number;
  /** Refuse every call whose number has these bits set (x32 within x86_64's arch). */
  refusedNumberBits?: number;
  socket: number;
  socketpair: number;
  ioctl: number;
  personality: number;
  clone: number;
  unshare: number;
  /**
   * The calls that create a file with a mode or change one, refused with EPERM when that mode sets
   * the set-user-ID or set-group-ID bit: `mode` is the argument holding it; `flags`, for the open
   * calls, the one holding O_CREAT (the mode means nothing without it).
   */
  modeSetting: readonly ModeSettingCall[];
  /** Refused with EPERM whatever their arguments. */
  refused: readonly number[];
  /** Refused with ENOSYS, as by a kernel built without them: programs then fall back. */
  absent: readonly number[];
}

/** A call that creates a file with a mode or changes one: its number and where its arguments are. */
export interface ModeSettingCall {
  number: number;
  /** The index of the argument holding the mode. */
  mode: number;
  /** The index of the argument holding the open flags, for the open calls. */
  flags?: number;
}

/** open(path, flags, mode), creat(path, mode), chmod(path, mode), mknod(path, mode, dev). */
const pathCalls = (numbers: { open: number; creat: number; chmod: number; mknod: number }) => [
  { number: numbers.open, flags: 1, mode: 2 },
  { number: numbers.creat, mode: 1 },
  { number: numbers.chmod, mode: 1 },
  { number: numbers.mknod, mode: 1 },
];

/**
 * openat(dirfd, path, flags, mode) first (the most frequent call of all), fchmod(fd, mode),
 * fchmodat(dirfd, path, mode), fchmodat2(dirfd, path, mode, flags), mknodat(dirfd, path, mode, dev).
 */
const atCalls = (numbers: { openat: number; fchmod: number; fchmodat: number; mknodat: number }) => [
  { number: numbers.openat, flags: 2, mode: 3 },
  { number: numbers.fchmod, mode: 1 },
  { number: numbers.fchmodat, mode: 2 },
  { number: FCHMODAT2, mode: 2 },
  { number: numbers.mknodat, mode: 2 },
];

// AUDIT_ARCH_* from <linux/audit.h>.
const ARCH_X86_64 = 0xc000003e;
const ARCH_I386 = 0x40000003;
const ARCH_AARCH64 = 0xc00000b7;
const ARCH_ARM = 0x40000028;
/** x32 system calls are x86_64's arch with this bit set in the number. */
const X32_SYSCALL_BIT = 0x40000000;

// The same number on every ABI (added after the tables were unified).
const IO_URING_SETUP = 425;
/** Its flags and mode sit in a struct in memory, which a filter cannot read. */
const OPENAT2 = 437;
const CLONE3 = 435;
const QUOTACTL_FD = 443;
const SET_MEMPOLICY_HOME_NODE = 450;
const FCHMODAT2 = 452;

/**
 * The calls each ABI refuses, in the order of this table (absent on an ABI: left out):
 * io_uring_setup; add_key, request_key, keyctl; perf_event_open; userfaultfd; bpf; syslog;
 * setns; open_by_handle_at; kexec_load, kexec_file_load; init_module, finit_module,
 * delete_module; acct; quotactl, quotactl_fd; uselib; modify_ldt; and socketcall (32-bit only).
 * Absent (ENOSYS): clone3; mbind, get_mempolicy, set_mempolicy, migrate_pages, move_pages,
 * set_mempolicy_home_node; openat2 (glibc's open never uses it; programs that do fall back to
 * openat).
 */
export const ABI_SYSTEM_CALLS: Readonly<Record<string, AbiSystemCalls>> = {
  x86_64: {
    arch: ARCH_X86_64,
    refusedNumberBits: X32_SYSCALL_BIT,
    socket: 41,
    socketpair: 53,
    ioctl: 16,
    personality: 135,
    clone: 56,
    unshare: 272,
    modeSetting: [
      ...atCalls({ openat: 257, fchmod: 91, fchmodat: 268, mknodat: 259 }),
      ...pathCalls({ open: 2, creat: 85, chmod: 90, mknod: 133 }),
    ],
    refused: [
      ...[IO_URING_SETUP, 248, 249, 250, 298, 323, 321, 103, 308, 304, 246, 320, 175, 313, 176],
      ...[163, 179, QUOTACTL_FD, 134, 154],
    ],
    absent: [CLONE3, 237, 239, 238, 256, 279, SET_MEMPOLICY_HOME_NODE, OPENAT2],
  },
  // i386 has no kexec_file_load.
  i386: {
    arch: ARCH_I386,
    socket: 359,
    socketpair: 360,
    ioctl: 54,
    personality: 136,
    clone: 120,
    unshare: 310,
    modeSetting: [
      ...atCalls({ openat: 295, fchmod: 94, fchmodat: 306, mknodat: 297 }),
      ...pathCalls({ open: 5, creat: 8, chmod: 15, mknod: 14 }),
    ],
    refused: [
      ...[IO_URING_SETUP, 286, 287, 288, 336, 374, 357, 103, 346, 342, 283, 128, 350, 129],
      ...[51, 131, QUOTACTL_FD, 86, 123, 102],
    ],
    absent: [CLONE3, 274, 275, 276, 294, 317, SET_MEMPOLICY_HOME_NODE, OPENAT2],
  },
  // aarch64 has neither uselib nor modify_ldt.
  aarch64: {
    arch: ARCH_AARCH64,
    socket: 198,
    socketpair: 199,
    ioctl: 29,
    personality: 92,
    clone: 220,
    unshare: 97,
    // The generic table has only the *at calls.
    modeSetting: atCalls({ openat: 56, fchmod: 52, fchmodat: 53, mknodat: 33 }),
    refused: [
      ...[IO_URING_SETUP, 217, 218, 219, 241, 282, 280, 116, 268, 265, 104, 294, 105, 273, 106],
      ...[89, 60, QUOTACTL_FD],
    ],
    absent: [CLONE3, 235, 236, 237, 238, 239, SET_MEMPOLICY_HOME_NODE, OPENAT2],
  },
  // arm (EABI, and aarch64's 32-bit compat) has no modify_ldt; 102 is the old ABI's socketcall.
  arm: {
    arch: ARCH_ARM,
    socket: 281,
    socketpair: 288,
    ioctl: 54,
    personality: 136,
    clone: 120,
    unshare: 337,
    modeSetting: [
      ...atCalls({ openat: 322, fchmod: 94, fchmodat: 333, mknodat: 324 }),
      ...pathCalls({ open: 5, creat: 8, chmod: 15, mknod: 14 }),
    ],
    refused: [
      ...[IO_URING_SETUP, 309, 310, 311, 364, 388, 386, 103, 375, 371, 347, 401, 128, 379, 129],
      ...[51, 131, QUOTACTL_FD, 86, 102],
    ],
    absent: [CLONE3, 319, 320, 321, 400, 344, SET_MEMPOLICY_HOME_NODE, OPENAT2],
  },
};
