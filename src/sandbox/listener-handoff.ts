import type { ChildProcess } from "node:child_process";
import { findOnPath } from "./bubblewrap.js";

/**
 * The descriptor of the handoff's channel in the sandbox: the child's fourth extra stdio entry, an
 * `ipc` entry (a stream socketpair Node reads with SCM_RIGHTS). Inherited, so nothing in the
 * sandbox calls socket(AF_UNIX), which the seccomp filter refuses.
 */
export const HANDOFF_CHANNEL_DESCRIPTOR = 4;

/** The message that comes with the listening socket (Node's IPC, `json` serialization). */
const HANDOFF_MESSAGE = "agentd-bridge";

/**
 * System call numbers the handoff makes, by `process.arch`: socket, setsockopt, bind, listen,
 * sendmsg, close. perl calls them with its `syscall` builtin: no module has to be found.
 */
const SYSTEM_CALLS: Record<string, readonly number[]> = {
  x64: [41, 54, 49, 50, 46, 3],
  arm64: [198, 208, 200, 201, 211, 57],
};

/**
 * Where the command's PERL* variables (and its LC_ALL) wait while perl runs: `<SAVED>=<n>`, then `<SAVED>_NAME_<i>`
 * and `<SAVED>_VALUE_<i>`. In the environment, not in perl's arguments: /proc/<pid>/cmdline (what
 * `ps` shows every local user) must not carry a secret a PERL* variable holds.
 */
const SAVED = "AGENTD_HANDOFF_PERL";

/**
 * Run by perl inside the sandbox (`perl -e HANDOFF_CODE <6 call numbers> <port> <priority>
 * <command> <args…>`; perl's own environment holds no PERL* variable but PERL_BADLANG=0, and LC_ALL=C (perl
 * then reads no locale files at its start, a tenth of its run), so that nothing the
 * command's environment says changes what perl runs and a locale missing in the sandbox does not
 * make it warn; the command's PERL* variables and LC_ALL wait under other names, see SAVED, and are put back
 * before it runs),
 * under the seccomp filter, the channel on descriptor 4): sets its own CPU priority to <priority>
 * (the sandbox's nice value, child-limits.ts: the command inherits it, before it can start anything,
 * so nothing it starts escapes it, and no `nice` runs), makes a TCP socket listening on
 * 127.0.0.1:<port> in the sandbox's own network namespace (AF_INET, which the filter allows), sends
 * it to the daemon over the channel as Node's IPC sends a handle (one JSON line with the descriptor
 * attached), closes the channel and its own copy of the socket (close-on-exec), and executes the
 * command in its place. The command never holds the channel, and nothing runs beside it: the
 * daemon accepts the connections made in the sandbox and carries each to the child's proxy.
 * Written for perl-base (Essential in Debian): the core language alone, no module.
 */
export const HANDOFF_CODE = `
my ($socket, $setsockopt, $bind, $listen, $sendmsg, $close, $port, $priority) = splice(@ARGV, 0, 8);
setpriority(0, 0, $priority);
my %restore;
for my $i (0 .. (delete $ENV{${SAVED}} // 0) - 1) {
  $restore{delete $ENV{"${SAVED}_NAME_$i"}} = delete $ENV{"${SAVED}_VALUE_$i"};
}
my $fd = syscall($socket, 2, 1 | 0x80000, 0);
die "agentd sandbox: the proxy listener: $!\\n" if $fd < 0;
my $one = pack("i", 1);
syscall($setsockopt, $fd, 1, 2, $one, 4);
my $address = pack("S n C4 x8", 2, $port, 127, 0, 0, 1);
syscall($bind, $fd, $address, 16) == 0 or die "agentd sandbox: the proxy listener: $!\\n";
syscall($listen, $fd, 128) == 0 or die "agentd sandbox: the proxy listener: $!\\n";
my $message = qq({"cmd":"NODE_HANDLE","type":"net.Native","msg":"${HANDOFF_MESSAGE}"}\\n);
my $vector = pack("P Q", $message, length $message);
my $control = pack("Q i i i x4", 20, 1, 1, $fd);
my $header = pack("Q L x4 P Q P Q i x4", 0, 0, $vector, 1, $control, 24, 0);
syscall($sendmsg, ${HANDOFF_CHANNEL_DESCRIPTOR}, $header, 0) == length $message
  or die "agentd sandbox: the proxy listener's handoff: $!\\n";
syscall($close, ${HANDOFF_CHANNEL_DESCRIPTOR});
delete @ENV{qw(NODE_CHANNEL_FD NODE_CHANNEL_SERIALIZATION_MODE PERL_BADLANG LC_ALL)};
@ENV{keys %restore} = values %restore;
exec { $ARGV[0] } @ARGV;
my $missing = $! == 2;
print STDERR "agentd sandbox: execvp $ARGV[0]: " . ($missing ? "No such file or directory" : "Permission denied") . "\\n";
exit($missing ? 127 : 126);
`;

/**
 * The handoff's perl arguments and environment: the command's PERL* variables (PERL5OPT, PERL5LIB…
 * would change what perl runs) wait under other names (see SAVED), never in the arguments, to be
 * put back for the command alone.
 */
export function handoffInvocation(
  program: HandoffProgram,
  port: number,
  priority: number,
  command: string[],
  environment: Record<string, string>,
): { arguments: string[]; environment: Record<string, string> } {
  const perlVariables = Object.entries(environment).filter(([name]) => waitsForCommand(name));
  const kept = Object.fromEntries(
    Object.entries(environment).filter(([name]) => !waitsForCommand(name) && !name.startsWith(SAVED)),
  );
  const saved: Record<string, string> = { [SAVED]: String(perlVariables.length) };
  perlVariables.forEach(([name, value], index) => {
    saved[`${SAVED}_NAME_${index}`] = name;
    saved[`${SAVED}_VALUE_${index}`] = value;
  });
  return {
    arguments: [
      program.perl,
      "-e",
      HANDOFF_CODE,
      ...program.systemCalls.map(String),
      String(port),
      String(priority),
      ...command,
    ],
    environment: { ...kept, ...saved, PERL_BADLANG: "0", LC_ALL: "C" },
  };
}

/** A variable of the command's that perl must not see: what changes what perl runs, and LC_ALL. */
function waitsForCommand(name: string): boolean {
  return name.startsWith("PERL") || name === "LC_ALL";
}

/** What the handoff needs on this machine: perl and the call numbers, or undefined (use the node bridge). */
export interface HandoffProgram {
  perl: string;
  systemCalls: readonly number[];
}

const programs = new Map<string, HandoffProgram | undefined>();

/** perl on `searchPath` and this architecture's call numbers; undefined when either is missing. */
export function handoffProgram(searchPath: string): HandoffProgram | undefined {
  if (programs.has(searchPath)) return programs.get(searchPath);
  const systemCalls = SYSTEM_CALLS[process.arch];
  const perl = findOnPath("perl", searchPath);
  const program = systemCalls === undefined || perl === undefined ? undefined : { perl, systemCalls };
  programs.set(searchPath, program);
  return program;
}

/** The wait for a handoff's listener; `close` stops waiting and drops a listener that comes later. */
export interface HandedListener {
  close(): void;
}

/**
 * Waits for the listening socket the child's handoff sends over its IPC channel, then stops
 * reading the channel (nothing else may come over it) and gives the listener to `serve` (the
 * child's proxy server, which accepts the connections made to it in the sandbox and closes it with
 * itself). Anything else on the channel, or a listener that comes after `close`, is dropped with
 * the channel.
 */
export function serveHandedListener(child: ChildProcess, serve: (handle: object) => void): HandedListener {
  let closed = false;
  // An IPC write that fails once the handoff is gone (its acknowledgement) is no concern of ours.
  const ignore = (): void => undefined;
  child.on("error", ignore);
  child.once("message", (message: unknown, handle: unknown) => {
    if (child.connected) child.disconnect();
    if (closed || message !== HANDOFF_MESSAGE || !isTcpHandle(handle)) {
      (handle as { close?: () => void } | undefined)?.close?.();
      return;
    }
    serve(handle as object);
  });
  return {
    close() {
      closed = true;
      if (child.connected) child.disconnect();
    },
  };
}

function isTcpHandle(handle: unknown): boolean {
  return typeof handle === "object" && handle !== null && handle.constructor?.name === "TCP";
}
