import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MARKERS, SandboxProject } from "./sandbox-project.js";

let project: SandboxProject;
afterEach(() => project.dispose());

/** Every planted secret that must never show up in a sandboxed command's output. */
function expectNoMarker(output: string, except: string[] = []): void {
  for (const [name, marker] of Object.entries(MARKERS)) {
    if (except.includes(name)) continue;
    expect(output.includes(marker), `${name} leaked:\n${output}`).toBe(false);
  }
}

describe("an agent with allow: [shell] inside the sandbox", () => {
  it("cannot read the vault key, the vault, the runs, the config, another workspace or $HOME", async () => {
    project = new SandboxProject();
    const attempts = [
      `cat ${project.dataDirectory}/vault.key`,
      `cat ${project.dataDirectory}/vault.json`,
      `cat ../../../data/vault.key; cat ../../../data/vault.json`,
      `ls -la ${project.dataDirectory}; cat ${project.dataDirectory}/runs/*`,
      `cat ${project.configFile}; ls ${path.dirname(project.configFile)}`,
      `cat ${project.workspaces}/other/notes.txt; ls ${project.workspaces}`,
      `cat "$HOME/.ssh/id_ed25519"; ls -A "$HOME"; cat ${project.home}/.ssh/id_ed25519`,
      `grep -r marker ${project.root} 2>/dev/null`,
      `ln -s ${project.dataDirectory} link; cat link/vault.key; cp -r ${project.dataDirectory} copy; cat copy/*`,
      `umount ${project.dataDirectory}; cat ${project.dataDirectory}/vault.key`,
      `mount --bind / /mnt 2>&1; cat /mnt${project.dataDirectory}/vault.key`,
    ];
    for (const command of attempts) {
      const result = await project.shell(command);
      expect(result.code, result.output).not.toBe("SANDBOX_UNAVAILABLE");
      expectNoMarker(result.output);
    }
    const listed = await project.shell(
      `ls -A ${project.workspaces}; ls -A "$HOME"; ls -A ${project.dataDirectory}`,
    );
    expect(listed.output).toMatch(/^exit code 0\nstdout:\nme\n\n/);
  });

  it("cannot see the daemon's environment or its processes", async () => {
    project = new SandboxProject();
    process.env["AGENTD_VAULT_KEY"] = "daemon-vault-key-0e6b";
    process.env["AGENTD_TOKEN"] = "daemon-api-token-5c2d";
    process.env["SOME_DAEMON_VARIABLE"] = "daemon-variable-8f3a";
    try {
      const result = await project.shell(
        `env; cat /proc/1/environ; cat /proc/${process.pid}/environ; ` +
          `for file in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$file"; done; ls /proc | grep -c '^[0-9]'`,
      );
      expect(result.output).not.toContain("daemon-vault-key");
      expect(result.output).not.toContain("daemon-api-token");
      expect(result.output).not.toContain("daemon-variable");
      expect(result.output).not.toMatch(/^AGENTD_/m);
      expect(result.output).toContain("PATH=");
      // Its own PID namespace: a handful of processes, not the host's.
      const count = Number(/(\d+)\n\nstderr:/.exec(result.output)?.[1]);
      expect(count).toBeLessThan(10);
    } finally {
      delete process.env["AGENTD_VAULT_KEY"];
      delete process.env["AGENTD_TOKEN"];
      delete process.env["SOME_DAEMON_VARIABLE"];
    }
  });

  it("writes its workdir and a private /tmp, and nothing outside (the host file never appears)", async () => {
    project = new SandboxProject();
    const written = await project.shell("echo made > made.txt && echo temp > /tmp/t && cat /tmp/t");
    expect(written.ok).toBe(true);
    expect(readFileSync(path.join(project.workdir, "made.txt"), "utf8")).toBe("made\n");

    const targets = [
      path.join(project.outside, "pwned"),
      path.join(project.root, "agents", "evil.md"),
      path.join(project.workspaces, "other", "pwned"),
      path.join(project.dataDirectory, "pwned"),
      path.join(project.home, "pwned"),
      "/var/tmp/agentd-sandbox-pwned",
    ];
    for (const target of targets) await project.shell(`echo x > ${target}; touch ${target}`);
    await project.shell(`echo x > /etc/agentd-sandbox-pwned; echo x > ../../pwned`);
    for (const target of [
      ...targets,
      "/etc/agentd-sandbox-pwned",
      path.join(project.root, ".agentd", "pwned"),
    ]) {
      expect(existsSync(target), target).toBe(false);
    }
  });

  it("in read-only mode writes nothing but /tmp", async () => {
    project = new SandboxProject();
    const result = await project.shell("echo x > made.txt", { sandbox: { mode: "read-only" } });
    expect(result.ok).toBe(false);
    expect(result.output).toContain("Read-only file system");
    expect(existsSync(path.join(project.workdir, "made.txt"))).toBe(false);
    expect(
      (await project.shell("echo x > /tmp/x && cat /tmp/x", { sandbox: { mode: "read-only" } })).ok,
    ).toBe(true);
  });

  it("sees a hidden folder's subfolder listed in read:, read-only, and never the vault or data_dir through it", async () => {
    project = new SandboxProject();
    const sandbox = { read: [path.join(project.home, ".config"), project.root], write: [project.outside] };
    const result = await project.shell(
      `cat ${project.home}/.config/tool/settings; cat ${project.home}/.ssh/id_ed25519; ` +
        `cat ${project.dataDirectory}/vault.key ${project.dataDirectory}/vault.json; echo w > ${project.outside}/ok; ` +
        `echo x > ${project.home}/.config/tool/settings`,
      { sandbox },
    );
    expect(result.output).toContain("visible-when-listed");
    expect(result.output).toContain("Read-only file system");
    // The whole project is listed, so the home inside it is visible: data_dir and the vault never are.
    expectNoMarker(result.output, ["home", "config"]);
    expect(readFileSync(path.join(project.outside, "ok"), "utf8")).toBe("w\n");
  });
});

describe("the sandbox's network", () => {
  let server: Server;
  let other: Server;
  let port: number;
  let otherPort: number;
  beforeAll(async () => {
    const answer = (text: string) =>
      createServer((_request, response) => response.end(text)).listen(0, "127.0.0.1");
    server = answer("hello-from-the-host");
    other = answer("the-other-server");
    await Promise.all([once(server, "listening"), once(other, "listening")]);
    port = (server.address() as AddressInfo).port;
    otherPort = (other.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.close();
    other.close();
  });

  const curl = (url: string) => `curl -sS --max-time 10 ${url}`;

  it("cannot reach a loopback server on the host with network: none", async () => {
    project = new SandboxProject();
    const result = await project.shell(curl(`http://127.0.0.1:${port}/`));
    expect(result.ok).toBe(false);
    expect(result.output).not.toContain("hello-from-the-host");
  });

  it("reaches a host of its allow-list through the proxy, and nothing else", async () => {
    project = new SandboxProject();
    const sandbox = { network: [`127.0.0.1:${port}`, "*.example.invalid"] };
    const allowed = await project.shell(curl(`http://127.0.0.1:${port}/`), { sandbox });
    expect(allowed.output).toContain("hello-from-the-host");

    const otherPortResult = await project.shell(curl(`http://127.0.0.1:${otherPort}/`), { sandbox });
    expect(otherPortResult.output).not.toContain("the-other-server");
    expect(otherPortResult.output).toContain("not in the sandbox's network list");

    // Around the proxy: straight to the port, or with the proxy variables dropped.
    const direct = await project.shell(
      `curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:${port}/; ` +
        `env -u http_proxy -u HTTP_PROXY -u ALL_PROXY -u all_proxy ${curl(`http://127.0.0.1:${port}/`)}; ` +
        `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}; printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3; cat <&3'`,
      { sandbox },
    );
    expect(direct.output).not.toContain("hello-from-the-host");

    // A CONNECT tunnel to a port not listed, and a host name that is not listed.
    const tunnel = await project.shell(
      `curl -sS --max-time 5 -p http://127.0.0.1:${otherPort}/; ${curl("http://localhost:" + String(port) + "/")}`,
      { sandbox },
    );
    expect(tunnel.output).not.toContain("the-other-server");
    expect(tunnel.output).not.toContain("hello-from-the-host");
  });

  it("with network: all shares the host's network", async () => {
    project = new SandboxProject();
    const result = await project.shell(curl(`http://127.0.0.1:${port}/`), { sandbox: { network: "all" } });
    expect(result.output).toContain("hello-from-the-host");
  });
});

describe("when the sandbox cannot be set up", () => {
  it("fails the call with SANDBOX_UNAVAILABLE, saying what to install, and runs nothing", async () => {
    project = new SandboxProject();
    const host = project.host({ ...process.env, HOME: project.home, PATH: "/nonexistent/bin" });
    const result = await project.shell("echo ran > ran.txt", { host });
    expect(result).toMatchObject({ ok: false, code: "SANDBOX_UNAVAILABLE" });
    expect(result.output).toContain("apt install bubblewrap");
    expect(result.output).toContain("sandbox: off");
    expect(existsSync(path.join(project.workdir, "ran.txt"))).toBe(false);
  });

  it("runs unsandboxed only when the agent says sandbox: off", async () => {
    project = new SandboxProject();
    const host = project.host({ ...process.env, HOME: project.home, PATH: "/nonexistent/bin:/usr/bin:/bin" });
    const result = await project.shell(`cat ${project.dataDirectory}/vault.key`, { host, sandbox: "off" });
    expect(result.output).toContain(MARKERS.vaultKey);
  });
});
