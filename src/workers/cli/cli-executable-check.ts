import { closeSync, constants, existsSync, fstatSync, openSync, readSync, realpathSync } from "node:fs";
import path from "node:path";
import type { Config } from "../../config/config-schema.js";
import type { AgentDefinition } from "../../definitions/agent-definition.js";
import { cliSandboxNeeds } from "../../sandbox/cli-sandbox-defaults.js";
import { findOnPath } from "../../sandbox/bubblewrap.js";
import type { SandboxHost } from "../../sandbox/sandbox-host.js";
import { accessOf, sandboxMounts } from "../../sandbox/sandbox-mounts.js";
import { cliEnvironment } from "./cli-environment.js";
import { resolveAdapter } from "./resolve-adapter.js";

/**
 * Warnings for a `worker: cli` agent whose CLI cannot run in its sandbox: it is a script whose
 * interpreter (`#!/usr/bin/env node` finding a node under ~/.nvm) or whose npm package (installed
 * under $HOME) the sandbox hides. The program file and its folder are shown; an interpreter
 * elsewhere and the package's other folders are not. Empty when nothing is wrong, for
 * another worker, or with `sandbox.mode: off`.
 */
export function hiddenExecutableWarnings(
  definition: Pick<AgentDefinition, "id" | "frontmatter" | "sandbox" | "workdir">,
  config: Pick<Config, "cli_tools">,
  host: SandboxHost,
  environment: NodeJS.ProcessEnv = process.env,
): string[] {
  const tool = definition.frontmatter.cli?.tool;
  if (definition.frontmatter.worker !== "cli" || tool === undefined) return [];
  let adapter;
  try {
    adapter = resolveAdapter(tool, config.cli_tools);
  } catch {
    return []; // An unknown tool is reported by the definition's own checks.
  }
  const searchPath = environment["PATH"] ?? "";
  const found = adapter.command.includes("/")
    ? path.resolve(adapter.command)
    : findOnPath(adapter.command, searchPath);
  // A command not found is reported when the agent runs (CLI_NOT_INSTALLED, then the fallback).
  if (found === undefined || definition.sandbox.mode === "off") return [];
  const needs = cliSandboxNeeds(adapter.tool, {
    ...cliEnvironment(adapter.tool, environment),
    ...adapter.environment,
  });
  let mounts;
  try {
    mounts = sandboxMounts(
      host.policyFor({
        settings: definition.sandbox,
        workdir: definition.workdir,
        owner: `agent "${definition.id}" (CLI ${adapter.tool})`,
        executables: [adapter.command],
        write: needs.write,
        hosts: needs.hosts,
        protect: needs.protect,
      }),
    );
  } catch {
    return []; // A workdir the sandbox refuses is reported when the agent runs.
  }
  const real = realPathOf(found);
  // Hidden as found on PATH (a link in ~/.nvm/bin) or as the file it leads to.
  const hidden = (place: string) =>
    accessOf(mounts, path.resolve(place)) === "hidden" || accessOf(mounts, realPathOf(place)) === "hidden";
  const interpreter = interpreterOf(real, searchPath);
  const warnings: string[] = [];
  const fix = `install it outside your home folder, or add its folder to this agent's sandbox.read`;
  if (interpreter !== undefined && hidden(interpreter)) {
    warnings.push(
      `cli: ${adapter.command} runs with ${interpreter}, which the sandbox hides: the CLI cannot start; ${fix}`,
    );
  }
  // The sandbox shows the script's own folder; the rest of its package (an npm package's other
  // folders) stays hidden when it lies in the home folder.
  const root = packageRoot(real);
  if (interpreter !== undefined && root !== undefined && hidden(root)) {
    warnings.push(
      `cli: ${adapter.command} is a script of the package in ${root}, which the sandbox hides: ` +
        `the CLI cannot load its own files; ${fix}`,
    );
  }
  return warnings;
}

/** The nearest folder above a script that holds a package.json (its npm package), if any. */
function packageRoot(script: string): string | undefined {
  let folder = path.dirname(script);
  for (let depth = 0; depth < 8; depth += 1) {
    if (existsSync(path.join(folder, "package.json"))) return folder;
    const parent = path.dirname(folder);
    if (parent === folder) return undefined;
    folder = parent;
  }
  return undefined;
}

function realPathOf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** The interpreter a script's `#!` line names (`env node`: node as found on PATH), or undefined. */
function interpreterOf(file: string, searchPath: string): string | undefined {
  let head: string;
  try {
    // Without blocking: a FIFO of that name (a PATH folder an agent writes) would hold the daemon.
    const descriptor = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    try {
      if (!fstatSync(descriptor).isFile()) return undefined;
      const buffer = Buffer.alloc(256);
      head = buffer.subarray(0, readSync(descriptor, buffer, 0, 256, 0)).toString("utf8");
    } finally {
      closeSync(descriptor);
    }
  } catch {
    return undefined;
  }
  if (!head.startsWith("#!")) return undefined;
  const words = (head.slice(2).split("\n")[0] ?? "").trim().split(/\s+/);
  const [program, ...rest] = words;
  if (program === undefined || program === "") return undefined;
  if (path.basename(program) !== "env") return program;
  const name = rest.find((word) => !word.startsWith("-") && !word.includes("="));
  return name === undefined ? undefined : (findOnPath(name, searchPath) ?? undefined);
}
