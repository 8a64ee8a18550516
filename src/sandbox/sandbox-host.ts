import { lstatSync, mkdirSync, realpathSync } from "node:fs";
import { AgentdError } from "../errors/agentd-error.js";
import os from "node:os";
import path from "node:path";
import type { Config } from "../config/config-schema.js";
import { type SandboxAvailability, findOnPath, sandboxAvailability } from "./bubblewrap.js";
import { existingRealPath } from "./sandbox-mounts.js";
import { isWithin } from "../util/path-within.js";
import { keepResolutions } from "./cached-sandbox-mounts.js";
import { LazySandboxPolicy } from "./lazy-sandbox-policy.js";
import { type HostRule, parseHostRule } from "../config/host-rules.js";
import type { SandboxNetwork, SandboxPolicy } from "./sandbox-policy.js";
import type { SandboxSettings } from "../config/sandbox-settings.js";
import {
  commandCandidates,
  commandFiles,
  daemonCodePaths,
  definitionFolders,
  environmentFiles,
  existingFiles,
  moduleFolders,
} from "./definition-paths.js";
import { type ScriptCandidates, scriptCandidates } from "./script-candidates.js";
import { isBashParserLoaded } from "../permissions/shell-parser.js";
import { hostExecutedPaths } from "./host-executed-paths.js";
import { withoutPlantedLinks } from "./planted-links.js";
import { handoffProgram } from "./listener-handoff.js";
import { madeProxySocketsFolder, proxySocketsFolder } from "./proxy-sockets-folder.js";
import { seccompShortfall } from "./seccomp-requirement.js";
import { hostSocketPlaces, neededInsideSocketPlaces } from "./socket-places.js";

export interface SandboxHostOptions {
  /** The daemon's config: data_dir, vault paths and agents_dir. */
  config: Config;
  /** The config file read, if any: its folder is hidden unless the workdir lies in it. */
  configFile?: string | undefined;
  /** Where HOME and PATH come from; default the daemon's environment. */
  environment?: NodeJS.ProcessEnv;
  /** The working directories of every agent: each is hidden from the others. */
  workdirs?: () => Iterable<string>;
  /**
   * Every agent's own `sandbox.write` paths: a link inside one, like one inside a workdir, may have
   * been planted by a sandboxed process, and no `read:`/`write:` path is bound through it.
   */
  writePaths?: () => Iterable<string>;
  /**
   * Every agent's hook commands with the workdir each is read from: the files they name are
   * read-only in every sandbox, not only the hooked agent's (another agent sharing the project
   * would otherwise rewrite the script that gates its tool calls and runs in its sandbox).
   */
  hookCommands?: () => Iterable<{ command: string; workdir: string }>;
  /** The machine, as `process.arch` names it (the default): whether the seccomp filter exists. */
  architecture?: string;
  /**
   * Whether this host prepares sandboxes (default): it then creates, once, the empty folders a
   * sandbox needs to bind read-only (missing agents and presets folders, the `node_modules` above
   * an MCP server's script) and the proxy sockets' folder. `agentd validate` only looks: false,
   * and it changes nothing in the project.
   */
  prepares?: boolean;
}

/** What one child needs from the sandbox beyond its settings. */
export interface ChildSandboxRequest {
  settings: SandboxSettings;
  workdir: string;
  /** `agent "notes"`, `MCP server "github"`: named in SANDBOX_UNAVAILABLE. */
  owner: string;
  /** Programs that must stay visible wherever installed (a CLI, an MCP server), looked up on PATH. */
  executables?: readonly string[];
  /** Extra writable paths (a CLI's config folder); `-try`: a missing one is skipped. */
  write?: readonly string[];
  /** Hosts reachable whatever `network` says, unless it is `all` (a CLI's API host). */
  hosts?: readonly string[];
  /** Paths that stay read-only even inside `write` (a CLI's settings in its config folder). */
  protect?: readonly string[];
  /** The agent's hook command lines (config's and its own): the files they name stay read-only. */
  hookCommands?: readonly string[];
}

/**
 * The daemon's side of the sandbox: what every child must not see (data_dir, the vault file and
 * key, the config folder, $HOME, the other agents' workspaces) and where bubblewrap is. One per
 * daemon (or `agentd run`); `policyFor` resolves one child's policy from it.
 */
export class SandboxHost {
  readonly #dataDirectory: string;
  readonly #secretFiles: string[];
  readonly #configFolder: string | undefined;
  readonly #homes: string[];
  readonly #searchPath: string;
  /** Read-only in every sandbox: agents and presets folders, MCP and CLI command files. */
  readonly #definitions: string[];
  /** Hidden in every sandbox, even inside a writable workdir: the config file, `.env` files. */
  readonly #configFiles: string[];
  readonly #workdirs: () => Iterable<string>;
  readonly #writePaths: () => Iterable<string>;
  readonly #hookCommands: () => Iterable<{ command: string; workdir: string }>;
  #hookCandidates:
    { hooks: Iterable<{ command: string; workdir: string }>; candidates: HookCandidates[] } | undefined;
  /** The scripts config's stdio MCP servers and CLI tools run: an agent must not make a missing one. */
  readonly #definitionScripts: ScriptCandidates;
  /** The scripts every agent's hooks run, read once per list of hooks, as the candidates are. */
  #hookScripts:
    { hooks: Iterable<{ command: string; workdir: string }>; scripts: ScriptCandidates } | undefined;
  /** What the shell of a hook expands before it runs (`~`, `$HOME`), and the PATH it searches. */
  readonly #knownVariables: Record<string, string>;
  /**
   * Each hook command's reading by folder and text: reading with the bash grammar costs ~80 µs a
   * command and touches no file (what exists is looked up afterwards, on every call), so an
   * agent's own hooks are not read again each time a file tool makes a file.
   */
  readonly #readings = new Map<string, ScriptCandidates>();
  /** Where the host's unix sockets are (socket-places.ts): hidden unless listed in `unix_sockets`. */
  readonly #socketPlaces: string[];
  /** Config `sandbox.unix_sockets`: the daemon's, whatever a child's settings say. */
  readonly #unixSockets: string[];
  /** Config `sandbox.private_addresses: allow`: the daemon's, whatever a child's settings say. */
  readonly #privateAddresses: boolean;
  readonly #architecture: string;
  /** Default workspaces live here: `<project>/.agentd/workspaces/<agent id>`. */
  readonly workspacesRoot: string;

  constructor(options: SandboxHostOptions) {
    const { config } = options;
    const environment = options.environment ?? process.env;
    this.#dataDirectory = config.data_dir;
    this.#secretFiles = [
      config.vault.file ?? path.join(config.data_dir, "vault.json"),
      config.vault.key_file ?? path.join(config.data_dir, "vault.key"),
    ];
    this.#configFolder = options.configFile === undefined ? undefined : path.dirname(options.configFile);
    // $HOME, os.homedir() (which reads $HOME) and the account's passwd home, which differs under
    // systemd or in a container; never "/".
    this.#homes = [...new Set([environment["HOME"] || os.homedir(), os.homedir(), passwdHome()])].filter(
      (home): home is string => home !== undefined && home !== "" && home !== "/",
    );
    this.#searchPath = environment["PATH"] ?? "";
    // The node bridge's proxy sockets, where this host's sandboxes will use it (no perl on its
    // PATH): made now, before any of them runs, so that every one of them hides it.
    const prepares = options.prepares !== false;
    if (prepares && handoffProgram(this.#searchPath) === undefined) proxySocketsFolder();
    this.#socketPlaces = hostSocketPlaces(environment);
    this.#unixSockets = config.sandbox.unix_sockets.map((entry) => path.resolve(entry));
    this.#privateAddresses = config.sandbox.private_addresses === "allow";
    this.#architecture = options.architecture ?? process.arch;
    this.workspacesRoot = defaultWorkspacesRoot(config);
    const project = path.dirname(config.agents_dir);
    const base = this.#configFolder ?? process.cwd();
    this.#definitions = [
      ...definitionFolders(config, prepares),
      ...daemonCodePaths(),
      ...Object.values(config.mcp_servers).flatMap((server) => {
        if (!("command" in server)) return [];
        const files = commandFiles([server.command, ...server.args], base);
        return [...files, ...moduleFolders(files, base, prepares)];
      }),
      ...Object.values(config.cli_tools).flatMap((tool) =>
        tool.command === undefined ? [] : commandFiles([tool.command], base),
      ),
    ];
    // A hook's shell gets the daemon's HOME and PATH (shellEnvironment); a server's argv[0] is found on PATH.
    this.#knownVariables = {
      ...(environment["HOME"] ? { HOME: environment["HOME"] } : {}),
      ...(environment["PATH"] === undefined ? {} : { PATH: environment["PATH"] }),
    };
    this.#definitionScripts = joinedCandidates([
      ...Object.values(config.mcp_servers).flatMap((server) =>
        "command" in server
          ? [scriptCandidates([server.command, ...server.args], base, this.#knownVariables)]
          : [],
      ),
      ...Object.values(config.cli_tools).flatMap((tool) =>
        tool.command === undefined ? [] : [scriptCandidates([tool.command], base, this.#knownVariables)],
      ),
    ]);
    this.#configFiles = [
      ...(options.configFile === undefined ? [] : [options.configFile]),
      ...environmentFiles([base, project, process.cwd()]),
    ];
    this.#workdirs = options.workdirs ?? (() => []);
    this.#writePaths = options.writePaths ?? (() => []);
    this.#hookCommands = options.hookCommands ?? (() => []);
  }

  /**
   * The files every agent's hooks name that this sandbox could write: the words of each hook are
   * read once per list of hooks (the composition root keeps one list while the definitions stay
   * the same), and on each call only those inside a writable folder are looked up, so a script
   * that appears after the load is protected from the next call on, without a thousand agents
   * with a config hook costing thousands of `stat`s a call.
   */
  #everyHookFile(writable: readonly string[]): string[] {
    const hooks = this.#hookCommands();
    if (this.#hookCandidates?.hooks !== hooks)
      this.#hookCandidates = { hooks, candidates: hookCandidates(hooks, this.#knownVariables["HOME"]) };
    const files: string[] = [];
    for (const { base, paths } of this.#hookCandidates.candidates) {
      const reachable = paths.filter((candidate) => writable.some((folder) => isWithin(candidate, folder)));
      if (reachable.length > 0) files.push(...existingFiles(reachable, base));
    }
    return files;
  }

  /** What one hook command runs, read from `workdir` (kept: see #readings). */
  #scriptsOf(command: string, workdir: string): ScriptCandidates {
    const key = `${workdir}\u0000${command}`;
    let reading = this.#readings.get(key);
    if (reading === undefined) {
      // Hook commands come from definitions: a bound only against a project that keeps changing them.
      if (this.#readings.size >= MAX_KEPT_READINGS) this.#readings.clear();
      reading = scriptCandidates(command, workdir, this.#knownVariables);
      // Read without the grammar, a command counts every word by name: not kept past its load.
      if (isBashParserLoaded()) this.#readings.set(key, reading);
    }
    return reading;
  }

  /** The scripts every agent's hooks run, read once per list of hooks. */
  #everyHookScript(): ScriptCandidates {
    const hooks = this.#hookCommands();
    if (this.#hookScripts?.hooks !== hooks) {
      const scripts = joinedCandidates(
        [...hooks].map(({ command, workdir }) => this.#scriptsOf(command, workdir)),
      );
      this.#hookScripts = { hooks, scripts };
    }
    return this.#hookScripts.scripts;
  }

  /**
   * Whether bubblewrap works here (probed once), and the seccomp filter exists for this machine
   * unless config lists unix sockets; for `agentd validate` and the start-up summary.
   */
  availability(): SandboxAvailability {
    const availability = sandboxAvailability(this.#searchPath);
    if (!availability.available) return availability;
    const shortfall = seccompShortfall(this.#unixSockets, this.#architecture);
    return shortfall === undefined ? availability : { available: false, ...shortfall };
  }

  /** The policy of one child: its settings applied to what this daemon must hide. */
  policyFor(request: ChildSandboxRequest): SandboxPolicy {
    const { settings, workdir } = request;
    // Socket places are hidden again after the binds, as the daemon's state is: a `read` of `/run`
    // must not show the buses. A listed socket is bound after them; a place holding the workdir is left.
    const proxies = madeProxySocketsFolder();
    const socketPlaces = [...this.#socketPlaces, ...(proxies === undefined ? [] : [proxies])].filter(
      (place) => !isWithin(workdir, place),
    );
    const mcpFolders = path.join(path.dirname(this.workspacesRoot), "mcp");
    // Folders another child could otherwise make first, as a link to $HOME, and so choose what an
    // agent's workdir is: each exists as a real folder before any sandboxed process runs.
    const otherWorkdirs = [...this.#workdirs()].filter((other) => !isWithin(workdir, other));
    // Each path of this call resolved once, here or in its layers (keepResolutions), never kept
    // for the next call: a link swapped between two calls is seen by the second.
    const resolved = new Map<string, string | undefined>();
    for (const folder of [this.workspacesRoot, mcpFolders, ...otherWorkdirs]) ensureFolder(folder, resolved);
    assertRealWorkspace(workdir, this.workspacesRoot, request.owner, resolved);
    // The workdir's real path, which the layers need too: the file tools' path check reads it
    // from the same call's resolutions (resolvedInCall) instead of resolving it again.
    existingRealPath(workdir, resolved);
    const alwaysHidden = [
      this.#dataDirectory,
      ...this.#secretFiles,
      this.workspacesRoot,
      mcpFolders,
      ...socketPlaces,
    ];
    // Every other agent's workdir, unless it holds this one (then only its own files are shown);
    // the homes and the config folder, even where the workdir holds them, unless they hold it.
    alwaysHidden.push(...otherWorkdirs);
    for (const folder of [
      ...this.#homes,
      ...(this.#configFolder === undefined ? [] : [this.#configFolder]),
    ]) {
      if (!isWithin(workdir, folder)) alwaysHidden.push(folder);
    }
    const hidden = [...alwaysHidden, ...this.#homes];
    // Into a socket place only what config lists in `unix_sockets`: a `read`/`write` path there
    // (an agent file's, say) would show a socket, and with the filter off, open it.
    // Compared as real paths, as they are bound: a link to /run/user/1000 is that folder.
    const realPlaces = socketPlaces.map((place) => existingRealPath(place, resolved) ?? place);
    const outsidePlaces = (entry: string) => {
      const real = existingRealPath(entry, resolved) ?? path.resolve(entry);
      return !realPlaces.some((place) => isWithin(real, place));
    };
    // A read or write path is bound as what it leads to: never through a link a sandbox could plant.
    const writableFolders = () => [
      workdir,
      ...settings.write,
      ...this.#workdirs(),
      ...this.#writePaths(),
      this.workspacesRoot,
    ];
    const ownRead = withoutPlantedLinks(settings.read, writableFolders);
    const ownWrite = withoutPlantedLinks(settings.write, writableFolders);
    const read = ownRead.filter(outsidePlaces);
    for (const executable of request.executables ?? []) {
      read.push(...this.#executablePaths(executable, hidden));
    }
    // The daemon's own binds inside data_dir (a CLI run's folder, a default workspace when data_dir
    // holds the workspaces) open again after data_dir is hidden; nothing the agent names does.
    const inDataDirectory = (entry: string) => isWithin(path.resolve(entry), this.#dataDirectory);
    const internal = (request.write ?? []).filter(inDataDirectory);
    if (inDataDirectory(workdir) && isWithin(path.resolve(workdir), this.workspacesRoot))
      internal.push(workdir);
    const write = [...ownWrite, ...(request.write ?? []).filter((entry) => !inDataDirectory(entry))].filter(
      outsidePlaces,
    );
    const writable = settings.mode === "workspace-write" ? [workdir, ...write] : write;
    // Looked up when first read, in the call that made the policy (bubblewrap's arguments, a file
    // tool's write check): a read the sandbox shows anyway needs none of it (readLayersOf).
    const protectedOf = () => [
      ...this.#definitions,
      ...hostExecutedPaths(writable),
      ...(request.protect ?? []),
      ...(request.hookCommands ?? []).flatMap((command) =>
        commandFiles(command, workdir, this.#knownVariables["HOME"]),
      ),
      ...this.#everyHookFile(writable),
    ];
    const unmadeOf = () => {
      const scripts = joinedCandidates([
        ...(request.hookCommands ?? []).map((command) => this.#scriptsOf(command, workdir)),
        this.#everyHookScript(),
        this.#definitionScripts,
      ]);
      // Found on PATH: only a PATH folder inside a writable one matters (most are /usr/bin…).
      const onPath = scripts.onPath.filter((candidate) =>
        writable.some((folder) => isWithin(candidate, folder)),
      );
      return {
        paths: missingFiles([...scripts.paths, ...onPath, ...scripts.resolved], writable),
        names: scripts.names,
      };
    };
    const policy = new LazySandboxPolicy(
      {
        mode: settings.mode,
        network: networkOf(settings.network, request.hosts ?? [], this.#privateAddresses),
        workdir,
        hidden,
        alwaysHidden,
        read,
        write: [...write, ...this.#unixSockets],
        unixSockets: [...this.#unixSockets],
        protectedHidden: [this.#dataDirectory, ...this.#configFiles, ...this.#secretFiles],
        internal,
        limits: { ...settings.limits },
        searchPath: this.#searchPath,
        owner: request.owner,
        linkChecked: { paths: [...ownRead, ...ownWrite], folders: writableFolders },
      },
      {
        protected: protectedOf,
        // With the socket places as this call found them: bubblewrap's mounts and a file tool's
        // write check need it, a read check does not (readLayersOf).
        systemRead: () => neededInsideSocketPlaces(socketPlaces, resolved),
        unmade: unmadeOf,
      },
    );
    keepResolutions(policy, resolved);
    return policy;
  }

  /**
   * The program as found on PATH, its real file, and the folders of both, unless a folder holds a
   * hidden path (a program straight in $HOME must not reveal $HOME).
   */
  #executablePaths(executable: string, hidden: readonly string[]): string[] {
    const found = findProgram(executable, this.#searchPath);
    if (found === undefined) return [];
    let real = found;
    try {
      real = realpathSync(found);
    } catch {
      // A dangling link: only the name is shown.
    }
    const paths = new Set([found, real]);
    for (const folder of [path.dirname(found), path.dirname(real)]) {
      if (!hidden.some((entry) => isWithin(entry, folder))) paths.add(folder);
    }
    return [...paths];
  }
}

/** Hook command readings kept at most (SandboxHost's #readings). */
const MAX_KEPT_READINGS = 1_024;

/** The scripts of several command lines, each path and name once. */
function joinedCandidates(each: readonly ScriptCandidates[]): ScriptCandidates {
  return {
    paths: [...new Set(each.flatMap((candidates) => candidates.paths))],
    names: [...new Set(each.flatMap((candidates) => candidates.names))],
    onPath: [...new Set(each.flatMap((candidates) => candidates.onPath))],
    resolved: [...new Set(each.flatMap((candidates) => candidates.resolved))],
  };
}

/** The paths one hook command's words may name, and the folder they are read from. */
interface HookCandidates {
  base: string;
  paths: string[];
}

/**
 * The candidates inside a writable folder that do not exist, as real paths (their folder resolved,
 * as the file tools see it): names a hook command gives that an agent could make first.
 */
function missingFiles(candidates: readonly string[], writable: readonly string[]): string[] {
  const missing: string[] = [];
  for (const candidate of candidates) {
    try {
      // Missing is the usual answer: told without an exception, which costs several µs each.
      if (lstatSync(candidate, { throwIfNoEntry: false }) !== undefined) continue;
    } catch {
      // Unreadable (a file where a folder should be): an agent could make it.
    }
    // Inside a writable folder as the file tools see it: the hook's folder may be named by a link.
    const real = realPathOfMissing(candidate);
    if (writable.some((folder) => isWithin(real, folder))) missing.push(real);
  }
  return missing;
}

/**
 * A missing path as the file tools will see it once they made it and the folders on its way: its
 * nearest existing folder resolved (a link on the way, `/srv/project` → `/data/project`, followed),
 * the names below it as written.
 */
function realPathOfMissing(candidate: string): string {
  const below: string[] = [];
  for (let folder = path.dirname(candidate); ; folder = path.dirname(folder)) {
    const real = existingRealPath(folder);
    if (real !== undefined) return path.join(real, ...below.reverse(), path.basename(candidate));
    if (folder === path.dirname(folder)) return candidate;
    below.push(path.basename(folder));
  }
}

/** Each hook command's candidate paths, each command read once (config hooks are in every agent's). */
function hookCandidates(
  hooks: Iterable<{ command: string; workdir: string }>,
  home: string | undefined,
): HookCandidates[] {
  const seen = new Set<string>();
  const found: HookCandidates[] = [];
  for (const { command, workdir } of hooks) {
    const key = `${workdir}\u0000${command}`;
    if (seen.has(key)) continue;
    seen.add(key);
    found.push({ base: workdir, paths: commandCandidates(command, workdir, home) });
  }
  return found;
}

/** `<project>/.agentd/workspaces`, the project being the folder that holds agents_dir. */
export function defaultWorkspacesRoot(config: Pick<Config, "agents_dir">): string {
  return path.join(path.dirname(config.agents_dir), ".agentd", "workspaces");
}

function networkOf(
  setting: SandboxSettings["network"],
  hosts: readonly string[],
  privateAddresses: boolean,
): SandboxNetwork {
  if (setting === "all") return { kind: "all" };
  const entries = [...(setting === "none" ? [] : setting), ...hosts];
  if (entries.length === 0) return { kind: "none" };
  const rules = entries.flatMap((entry): HostRule[] => {
    const rule = parseHostRule(entry);
    return rule === undefined ? [] : [rule];
  });
  return { kind: "hosts", rules, privateAddresses };
}

/**
 * Creates a missing folder; never throws (a place nothing can create stays missing for all). The
 * folder is hidden in every sandbox, so its layers need its real path: looking for it by resolving
 * it (kept in the call's `resolved`) answers both, where an `access` first cost a system call more
 * every tool call. One it creates is resolved again when next asked.
 */
function ensureFolder(folder: string, resolved: Map<string, string | undefined>): void {
  try {
    if (existingRealPath(folder, resolved) !== undefined) return;
    resolved.delete(folder);
    mkdirSync(folder, { recursive: true });
  } catch {
    // Read-only or not permitted: a sandboxed process cannot create it either.
  }
}

/**
 * A default workspace must really be inside the workspaces root: one that resolves elsewhere (a
 * link planted while the root was missing) would hand the agent whatever it points to.
 */
function assertRealWorkspace(
  workdir: string,
  workspacesRoot: string,
  owner: string,
  resolved: Map<string, string | undefined>,
): void {
  if (!isWithin(path.resolve(workdir), workspacesRoot)) return;
  const real = existingRealPath(workdir, resolved);
  const realRoot = existingRealPath(workspacesRoot, resolved) ?? workspacesRoot;
  if (real === undefined || isWithin(real, realRoot)) return;
  throw new AgentdError("SANDBOX_UNAVAILABLE", `the workspace of ${owner} leads outside ${workspacesRoot}`, {
    hint: `${workdir} resolves to ${real}; remove that link (the daemon makes the folder again)`,
  });
}

/** The account's home folder as the passwd database has it, whatever $HOME says. */
function passwdHome(): string | undefined {
  try {
    return os.userInfo().homedir;
  } catch {
    return undefined;
  }
}

function findProgram(program: string, searchPath: string): string | undefined {
  return program.includes("/") ? path.resolve(program) : findOnPath(program, searchPath);
}
