import { execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";

/** A real PostgreSQL on loopback in a temp folder, for one test file. */
export interface PostgresServer {
  /** `postgres://agentd@127.0.0.1:<port>/agentd` (trust authentication on loopback). */
  url: string;
  /** A fresh empty database on this server; its URL. */
  createDatabase(name: string): Promise<string>;
  /** `pg_ctl stop -m fast`: the server goes away (connections cut), its data stays. */
  pause(): Promise<void>;
  /** Starts the paused server again on the same port and data. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Where initdb/pg_ctl live: on PATH (/usr/local/bin), or Debian's /usr/lib/postgresql/<version>/bin.
 * Undefined when PostgreSQL is not installed.
 */
export function findPostgresBinaries(): string | undefined {
  for (const folder of ["/usr/local/bin", "/usr/bin"]) {
    if (existsSync(path.join(folder, "pg_ctl")) && existsSync(path.join(folder, "initdb"))) return folder;
  }
  const debian = "/usr/lib/postgresql";
  if (!existsSync(debian)) return undefined;
  const versions = readdirSync(debian).sort((left, right) => Number(right) - Number(left));
  for (const version of versions) {
    const folder = path.join(debian, version, "bin");
    if (existsSync(path.join(folder, "pg_ctl"))) return folder;
  }
  return undefined;
}

/** Why the PostgreSQL tests cannot run here, or undefined when they can. */
export function postgresMissingReason(): string | undefined {
  return findPostgresBinaries() === undefined
    ? "PostgreSQL is not installed (initdb/pg_ctl not found on PATH nor in /usr/lib/postgresql/*/bin)"
    : undefined;
}

/** PostgreSQL refuses to run as root: as root, the server runs as this unprivileged user. */
function serverUser(): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ["postgres", "nobody"]) {
    try {
      const uid = Number(execFileSync("id", ["-u", name], { encoding: "utf8" }).trim());
      const gid = Number(execFileSync("id", ["-g", name], { encoding: "utf8" }).trim());
      return { name, uid, gid };
    } catch {
      // no such user: try the next
    }
  }
  throw new Error("running as root, but neither a postgres nor a nobody user exists to run PostgreSQL");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

function run(binaries: string, user: string | undefined, program: string, args: string[]): Promise<void> {
  const command = user === undefined ? path.join(binaries, program) : "runuser";
  const fullArgs = user === undefined ? args : ["-u", user, "--", path.join(binaries, program), ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(command, fullArgs, { stdio: ["ignore", "pipe", "pipe"], cwd: os.tmpdir() });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${program} exited with ${code}: ${output}`)),
    );
  });
}

/** A temp folder the server's user owns (mode 755), for a data folder inside it. */
function serverFolder(prefix: string, user: { uid: number; gid: number } | undefined): string {
  const folder = mkdtempSync(path.join(os.tmpdir(), prefix));
  chmodSync(folder, 0o755);
  if (user) chownSync(folder, user.uid, user.gid);
  return folder;
}

/**
 * A data folder fresh from initdb, made once per machine (per PostgreSQL version and server user)
 * and copied for each server: initdb takes seconds (a loaded machine: twenty), a copy of its 40 MB
 * a fraction of one, and some thirty test files and benches each start a server. Made in a folder
 * of its own and renamed into place, so test files starting at once never see half of one; the
 * first rename wins and the others remove theirs.
 */
async function initializedDataFolder(
  binaries: string,
  user: { name: string; uid: number; gid: number } | undefined,
): Promise<string> {
  const version = execFileSync(path.join(binaries, "initdb"), ["--version"], { encoding: "utf8" })
    .trim()
    .replace(/[^A-Za-z0-9.]+/g, "-");
  const template = path.join(
    os.tmpdir(),
    `agentd-pg-template-${version}-${user?.name ?? process.getuid?.()}`,
  );
  if (existsSync(path.join(template, "data", "PG_VERSION"))) return path.join(template, "data");
  const making = serverFolder("agentd-pg-initdb-", user);
  await run(binaries, user?.name, "initdb", [
    "-D",
    path.join(making, "data"),
    "-U",
    "agentd",
    "--auth=trust",
    "--no-sync",
    "-E",
    "UTF8",
  ]);
  try {
    renameSync(making, template);
  } catch {
    // Another test file's initdb got there first: use that one.
    rmSync(making, { recursive: true, force: true });
  }
  return path.join(template, "data");
}

/** `cp -a`: the copy keeps the owner (the server's user) and the 0700 mode PostgreSQL requires. */
function copyFolder(from: string, to: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("cp", ["-a", from, to], { stdio: ["ignore", "ignore", "pipe"] });
    let output = "";
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`cp -a ${from} ${to} exited with ${code}: ${output}`)),
    );
  });
}

/**
 * A copy of a fresh initdb's data folder in a temp folder, then pg_ctl start on a free loopback
 * port; resolves once it accepts.
 */
export async function startPostgres(): Promise<PostgresServer> {
  const binaries = findPostgresBinaries();
  if (binaries === undefined) throw new Error(postgresMissingReason());
  const user = serverUser();
  const folder = serverFolder("agentd-pg-", user);
  const dataFolder = path.join(folder, "data");
  const port = await freePort();
  await copyFolder(await initializedDataFolder(binaries, user), dataFolder);
  const settings = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${folder}`,
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c max_connections=200",
  ].join(" ");
  const start = () =>
    run(binaries, user?.name, "pg_ctl", [
      "-D",
      dataFolder,
      "-o",
      settings,
      "-l",
      path.join(folder, "log"),
      "-w",
      "start",
    ]);
  await start();
  const base = `postgres://agentd@127.0.0.1:${port}`;
  let admin = new pg.Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  await admin.query("CREATE DATABASE agentd");
  return {
    url: `${base}/agentd`,
    async createDatabase(name) {
      await admin.query(`CREATE DATABASE "${name.replaceAll('"', "")}"`);
      return `${base}/${name}`;
    },
    async pause() {
      await admin.end().catch(() => undefined);
      await run(binaries, user?.name, "pg_ctl", ["-D", dataFolder, "-m", "fast", "-w", "stop"]);
    },
    async resume() {
      await start();
      admin = new pg.Client({ connectionString: `${base}/postgres` });
      await admin.connect();
    },
    async stop() {
      await admin.end().catch(() => undefined);
      await run(binaries, user?.name, "pg_ctl", ["-D", dataFolder, "-m", "immediate", "stop"]).catch(
        () => undefined,
      );
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
