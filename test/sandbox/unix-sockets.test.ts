import { execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { type Server, createServer as createHttpServer } from "node:http";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxOverrideSchema, SandboxSettingsSchema } from "../../src/config/sandbox-settings.js";
import { SandboxProject } from "./sandbox-project.js";

/** Tries to connect to each target (`@name`: an abstract socket) and says what happened, one line each. */
const PROBE = `
import errno, socket, sys
for target in sys.argv[1:]:
    address = "\\0" + target[1:] if target.startswith("@") else target
    try:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(5)
        connection.connect(address)
        print(target, "reached")
    except OSError as error:
        print(target, "refused", errno.errorcode.get(error.errno, error.errno))
try:
    socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    print("datagram-pair made")
except OSError as error:
    print("datagram-pair refused", errno.errorcode.get(error.errno, error.errno))
socket.socketpair()
print("stream-pair made")
`;

function installed(program: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** What the file started, ended after it. */
const stops: (() => void)[] = [];

/** A unix socket server at a path, that greets whoever connects. */
async function socketServer(address: string): Promise<void> {
  const server = net
    .createServer((socket) => {
      socket.on("error", () => socket.destroy());
      socket.end("hello\n");
    })
    .listen(address);
  await once(server, "listening");
  stops.push(() => server.close());
}

/** A private D-Bus bus at `address`, ready once it printed the address. */
async function dbusBus(address: string): Promise<string> {
  const child = spawn("dbus-daemon", ["--session", "--nofork", "--print-address", `--address=${address}`], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  stops.push(() => child.kill());
  const [line] = (await once(child.stdout, "data")) as [Buffer];
  return line.toString().trim();
}

/**
 * A server on the abstract socket `name`, in python as X11 and D-Bus name theirs (the exact name;
 * Node pads an abstract name with NULs to the whole sun_path), ready once it says so.
 */
async function abstractServer(name: string): Promise<void> {
  const server =
    "import socket, sys\n" +
    "server = socket.socket(socket.AF_UNIX)\n" +
    "server.bind('\\0' + sys.argv[1])\n" +
    "server.listen(16)\n" +
    "print('ready', flush=True)\n" +
    "while True:\n" +
    "    connection, _ = server.accept()\n" +
    "    connection.sendall(b'hello')\n" +
    "    connection.close()\n";
  const child = spawn("python3", ["-c", server, name], { stdio: ["ignore", "pipe", "inherit"] });
  stops.push(() => child.kill());
  await once(child.stdout, "data");
}

/** An ssh-agent listening at `socketPath`, ready once it printed its environment. */
function sshAgent(socketPath: string): void {
  const output = execFileSync("ssh-agent", ["-s", "-a", socketPath], { encoding: "utf8" });
  const pid = Number(/SSH_AGENT_PID=(\d+)/.exec(output)?.[1]);
  stops.push(() => process.kill(pid));
}

let project: SandboxProject;
let runtime: string;
let agentFolder: string;
let environment: NodeJS.ProcessEnv;
const abstractName = `agentd-test-${randomBytes(6).toString("hex")}`;

beforeAll(async () => {
  project = new SandboxProject();
  runtime = path.join(project.root, "runtime");
  agentFolder = path.join(project.root, "ssh-agent-folder");
  mkdirSync(runtime);
  mkdirSync(agentFolder);
  writeFileSync(path.join(project.workdir, "probe.py"), PROBE);
  environment = {
    ...process.env,
    HOME: project.home,
    XDG_RUNTIME_DIR: runtime,
    SSH_AUTH_SOCK: path.join(agentFolder, "agent.sock"),
  };
  await socketServer(path.join(project.workdir, "service.sock"));
  await abstractServer(abstractName);
  await socketServer(path.join(runtime, "bus"));
  await socketServer(path.join(runtime, "listed.sock"));
  await socketServer(path.join(agentFolder, "agent.sock"));
});

afterAll(() => {
  for (const stop of stops) stop();
  project.dispose();
});

const probe = (...targets: string[]) => `python3 probe.py ${targets.join(" ")}`;

describe("host unix sockets, from a sandboxed shell", () => {
  it("cannot connect to one it can see, nor to an abstract one, whatever its network", async () => {
    const host = project.host(environment);
    const targets = [path.join(project.workdir, "service.sock"), `@${abstractName}`];
    const outside = await project.shell(probe(...targets), { host, sandbox: "off" });
    expect(outside.output).toContain(`@${abstractName} reached`);
    expect(outside.output).toContain("service.sock reached");

    for (const network of ["none", "all", ["127.0.0.1:9"]]) {
      const result = await project.shell(probe(...targets), { host, sandbox: { network } });
      expect(result.output, JSON.stringify(network)).not.toContain("reached");
      expect(result.output).toContain("service.sock refused EPERM");
      expect(result.output).toContain(`@${abstractName} refused EPERM`);
      expect(result.output).toContain("datagram-pair refused EPERM");
      expect(result.output).toContain("stream-pair made");
    }
  });

  it.skipIf(!installed("dbus-daemon") || !installed("dbus-send"))(
    "cannot talk to a D-Bus session bus, at a path it sees or at an abstract address",
    async () => {
      const host = project.host(environment);
      const atPath = await dbusBus(`unix:path=${path.join(project.workdir, "session-bus")}`);
      const abstract = await dbusBus(`unix:abstract=${abstractName}-bus`);
      const listNames = (address: string) =>
        `dbus-send --bus=${address} --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.ListNames`;
      const outside = await project.shell(listNames(atPath), { host, sandbox: "off" });
      expect(outside.output).toContain('string "org.freedesktop.DBus"');

      for (const [address, network] of [
        [atPath, "none"],
        [atPath, "all"],
        [abstract, "all"],
        [abstract, "none"],
      ] as const) {
        const result = await project.shell(listNames(address), { host, sandbox: { network } });
        expect(result.ok, `${address} ${network}`).toBe(false);
        expect(result.output).not.toContain("org.freedesktop.DBus");
      }
    },
  );

  it.skipIf(!installed("ssh-agent") || !installed("ssh-add"))("cannot use an ssh-agent", async () => {
    const host = project.host(environment);
    const agentSocket = path.join(project.workdir, "ssh-agent.sock");
    sshAgent(agentSocket);
    const list = `SSH_AUTH_SOCK=${agentSocket} ssh-add -l; echo "ssh-add exit $?"`;
    const outside = await project.shell(list, { host, sandbox: "off" });
    expect(outside.output).toContain("The agent has no identities");
    for (const network of ["none", "all"]) {
      const result = await project.shell(list, { host, sandbox: { network } });
      expect(result.output).not.toContain("The agent has no identities");
      expect(result.output).toContain("ssh-add exit 2");
    }
  });

  it("sees nothing of the socket places: the runtime dir, $SSH_AUTH_SOCK's folder, /run/user, the buses", async () => {
    const host = project.host(environment);
    const result = await project.shell(
      `ls -A ${runtime} ${agentFolder} /run/user /run/dbus /run/systemd 2>&1; echo listed`,
      { host },
    );
    expect(result.output).not.toMatch(/\bbus\b|listed\.sock|agent\.sock|system_bus_socket/);
    expect(result.output).toContain("listed");
  });

  it("reaches a socket config lists (which lets unix sockets through the filter), and still no other", async () => {
    const listed = path.join(runtime, "listed.sock");
    const host = project.host(environment, { unix_sockets: [listed] });
    const result = await project.shell(
      `${probe(listed, path.join(runtime, "bus"), path.join(agentFolder, "agent.sock"))}; grep '^Seccomp:' /proc/self/status`,
      { host },
    );
    expect(result.output).toContain(`${listed} reached`);
    expect(result.output).toContain(`${path.join(runtime, "bus")} refused ENOENT`);
    expect(result.output).toContain(`${path.join(agentFolder, "agent.sock")} refused ENOENT`);
    expect(result.output).toContain("datagram-pair made");
    expect(result.output).toMatch(/^Seccomp:\s+2$/m);

    // Nor through a read/write path into a socket place, even by a link in the workdir.
    symlinkSync(runtime, path.join(project.workdir, "runtime-link"));
    const widened = await project.shell(
      probe(listed, path.join(runtime, "bus"), path.join(project.workdir, "runtime-link", "bus")),
      {
        host,
        sandbox: { read: [runtime], write: [path.join(project.workdir, "runtime-link"), agentFolder] },
      },
    );
    expect(widened.output).toContain(`${listed} reached`);
    expect(widened.output).not.toMatch(/bus reached/);

    const filtered = await project.shell("grep '^Seccomp:' /proc/self/status", {
      host: project.host(environment),
    });
    expect(filtered.output).toMatch(/^Seccomp:\s+2$/m);
  });

  it("lets only config list sockets: an agent file's sandbox has no unix_sockets", () => {
    expect(SandboxOverrideSchema.safeParse({ unix_sockets: ["/run/user/1000/bus"] }).success).toBe(false);
    expect(SandboxSettingsSchema.parse({}).unix_sockets).toEqual([]);
    expect(SandboxSettingsSchema.parse({ unix_sockets: ["/run/a.sock"] }).unix_sockets).toEqual([
      "/run/a.sock",
    ]);
  });
});

describe("the network bridge, with no unix socket inside the sandbox", () => {
  const big = Buffer.alloc(32 * 1024 * 1024);
  for (let offset = 0; offset < big.length; offset += 4) big.writeUInt32LE(offset, offset);
  const bigDigest = createHash("sha256").update(big).digest("hex");
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createHttpServer((request, response) => {
      if (request.url === "/big") return void response.end(big);
      response.end(`answer-${request.url?.slice(1)}\n`);
    }).listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => server.close());

  it("carries concurrent connections and a large download, read fast or slowly", async () => {
    const sandbox = { network: [`127.0.0.1:${port}`] };
    const url = `http://127.0.0.1:${port}`;
    const parallel = await project.shell(
      `for i in $(seq 1 24); do curl -sS --max-time 60 ${url}/$i -o /tmp/answer-$i & done; wait; cat /tmp/answer-* | sort | uniq | wc -l`,
      { sandbox },
    );
    expect(parallel.output).toMatch(/stdout:\n24\n/);

    const slowReader =
      "import hashlib, sys, time\n" +
      "digest = hashlib.sha256()\n" +
      "while chunk := sys.stdin.buffer.read(1 << 20):\n" +
      "    digest.update(chunk)\n" +
      "    time.sleep(0.01)\n" +
      "print('slow', digest.hexdigest())\n";
    writeFileSync(path.join(project.workdir, "slow-reader.py"), slowReader);
    const download = await project.shell(
      `curl -sS --max-time 90 ${url}/big | sha256sum; ` +
        `curl -sS --max-time 90 ${url}/big | python3 slow-reader.py & ` +
        `curl -sS --max-time 90 ${url}/small; wait`,
      { sandbox },
    );
    expect(download.output).toContain(`${bigDigest}  -`);
    expect(download.output).toContain(`slow ${bigDigest}`);
    expect(download.output).toContain("answer-small");
  }, 120_000);
});
