import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { handoffInvocation, handoffProgram } from "../../src/sandbox/listener-handoff.js";
import { SandboxProject } from "./sandbox-project.js";

let project: SandboxProject | undefined;
afterEach(() => project?.dispose());

/**
 * With a host list the sandbox makes its proxy listener (127.0.0.1:3128 in its own network
 * namespace) in perl before the command starts and hands it to the daemon, which accepts its
 * connections: the command reaches an allowed host through the proxy, yet no process in the
 * sandbox holds the channel, the listener or any other socket for an attacker to take over
 * (pidfd_getfd, /proc/<pid>/fd), and Node's IPC variables are gone from its environment.
 */
it.skipIf(handoffProgram(process.env["PATH"] ?? "") === undefined)(
  "a host-list call reaches its host through the handed listener, and nothing in the sandbox holds a socket",
  { timeout: 120_000 },
  async () => {
    project = new SandboxProject();
    const upstream = createServer((_request, response) => response.end("upstream-marker-6b1d"));
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const port = (upstream.address() as AddressInfo).port;
    try {
      const fetch = [
        "exec 3<>/dev/tcp/127.0.0.1/3128",
        `printf 'GET http://127.0.0.1:${port}/ HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n' >&3`,
        "timeout 10 cat <&3",
        "exec 3<&-",
      ].join(" && ");
      const inspect = [
        // Every descriptor beyond stdio (sockets: Node's pipes) of every process the command sees.
        'echo "sockets: $(for fd in /proc/[0-9]*/fd/*; do [ "${fd##*/}" -gt 2 ] && readlink "$fd"; done 2>/dev/null | grep -c socket:)"',
        '{ : >&4; } 2>/dev/null && echo "descriptor 4: open" || echo "descriptor 4: closed"',
        'echo "channel variable: ${NODE_CHANNEL_FD-unset}"',
        'echo "LC_ALL: ${LC_ALL-unset}; PERL_BADLANG: ${PERL_BADLANG-unset}"',
      ].join("; ");
      const result = await project.shell(`${fetch}; ${inspect}`, {
        sandbox: { network: [`127.0.0.1:${port}`] },
      });
      expect(result.output).toContain("upstream-marker-6b1d");
      expect(result.output).toContain("sockets: 0");
      expect(result.output).toContain("descriptor 4: closed");
      expect(result.output).toContain("channel variable: unset");
      // perl runs with LC_ALL=C; the command gets the daemon's own (none, unless it has one).
      expect(result.output).toContain(`LC_ALL: ${process.env["LC_ALL"] ?? "unset"}; PERL_BADLANG: unset`);
    } finally {
      upstream.close();
    }
  },
);

/**
 * The handed listener is the only way out, so the command must not be able to put its own in its
 * place: binding 127.0.0.1:3128 or 0.0.0.0:3128 again, with SO_REUSEADDR or SO_REUSEPORT (which
 * Linux honours only when the first socket set it too), fails while the daemon holds the listener.
 */
it.skipIf(handoffProgram(process.env["PATH"] ?? "") === undefined)(
  "leaves the command no way to bind the proxy's port in its place",
  { timeout: 60_000 },
  async () => {
    project = new SandboxProject();
    const bind = [
      "perl -e 'use Socket;",
      'for my $spec (["127.0.0.1", 1], ["0.0.0.0", 1], ["127.0.0.1", 0]) {',
      "  socket(my $s, PF_INET, SOCK_STREAM, 0) or die;",
      "  setsockopt($s, SOL_SOCKET, SO_REUSEADDR, 1);",
      "  setsockopt($s, SOL_SOCKET, 15, 1) if $spec->[1];",
      '  print "bind $spec->[0]: ", (bind($s, pack_sockaddr_in(3128, inet_aton($spec->[0]))) ? "bound" : "refused"), "\\n";',
      "}'",
    ].join("\n");
    const result = await project.shell(bind, { sandbox: { network: ["example.invalid"] } });
    expect(result.output).toContain("bind 127.0.0.1: refused");
    expect(result.output).toContain("bind 0.0.0.0: refused");
    expect(result.output).not.toContain("bound");
  },
);

/** perl runs with LC_ALL=C (no locale files read at its start); the command gets the daemon's LC_ALL back. */
it.skipIf(handoffProgram(process.env["PATH"] ?? "") === undefined)(
  "gives the command the daemon's LC_ALL, not the C locale perl ran with",
  { timeout: 60_000 },
  async () => {
    project = new SandboxProject();
    const before = process.env["LC_ALL"];
    process.env["LC_ALL"] = "POSIX";
    try {
      const result = await project.shell('echo "LC_ALL: ${LC_ALL-unset}"', {
        sandbox: { network: ["example.invalid"] },
      });
      expect(result.output).toContain("LC_ALL: POSIX");
    } finally {
      if (before === undefined) delete process.env["LC_ALL"];
      else process.env["LC_ALL"] = before;
    }
  },
);

/**
 * perl's arguments are its /proc/<pid>/cmdline, which `ps` shows every local user: a secret in a
 * PERL* variable (PERL5OPT, a token a tool reads from PERL_…) must wait in the environment, which
 * only the same user can read, and come back to the command.
 */
it("keeps the command's PERL* variables and LC_ALL from the handoff's perl and out of its arguments", () => {
  const invocation = handoffInvocation(
    { perl: "/usr/bin/perl", systemCalls: [1, 2, 3, 4, 5, 6] },
    3128,
    10,
    ["bash", "-c", "x"],
    {
      PATH: "/usr/bin",
      PERL5OPT: "-Mevil",
      PERL5LIB: "/tmp/lib",
      PERL_TOKEN: "secret-value-91af",
      LC_ALL: "de_DE.UTF-8",
      AGENTD_HANDOFF_PERL: "7",
    },
  );
  expect(invocation.environment["LC_ALL"]).toBe("C");
  expect(Object.values(invocation.environment)).toContain("de_DE.UTF-8");
  expect(Object.keys(invocation.environment).filter((name) => name.startsWith("PERL"))).toEqual([
    "PERL_BADLANG",
  ]);
  expect(invocation.environment["PATH"]).toBe("/usr/bin");
  expect(invocation.arguments.slice(3)).toEqual([
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "3128",
    "10",
    "bash",
    "-c",
    "x",
  ]);
  for (const value of ["-Mevil", "/tmp/lib", "secret-value-91af", "PERL_TOKEN"]) {
    expect(invocation.arguments.join("\0")).not.toContain(value);
  }
  expect(invocation.environment["AGENTD_HANDOFF_PERL"]).toBe("4");
});
