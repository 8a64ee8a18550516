import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { parseHostRule } from "./host-rules.js";

const HostEntrySchema = z.string().refine((entry) => parseHostRule(entry) !== undefined, {
  message: 'not a host: write "api.github.com", "*.npmjs.org", "127.0.0.1:8080" or "[::1]:8080"',
});

/** `none` (no network), `all` (the host's network), or the hosts a child may reach through the proxy. */
export const NetworkSettingSchema = z.union([z.enum(["none", "all"]), z.array(HostEntrySchema)]);
export type NetworkSetting = z.infer<typeof NetworkSettingSchema>;

export const SandboxModeSchema = z.enum(["workspace-write", "read-only", "off"]);
export type SandboxMode = z.infer<typeof SandboxModeSchema>;

/** The most processes (threads included) one sandboxed call may have; the floor keeps a build working. */
const ProcessesSchema = z.number().int().min(32).max(4_194_304);
/** How many steps below the daemon's CPU priority sandboxed processes run (`nice`): 0 to 19. */
const NiceSchema = z.number().int().min(0).max(19);

/**
 * What one sandboxed call (a shell command, a CLI worker, an MCP server, a hook) may consume, so
 * that a fork bomb or a spinner takes down only that call, never the daemon.
 */
export const SandboxLimitsSchema = z.strictObject({
  processes: ProcessesSchema.default(1024),
  nice: NiceSchema.default(10),
});
export type SandboxLimits = z.infer<typeof SandboxLimitsSchema>;
/** The limits when config says nothing: room for a parallel build, not for a fork bomb. */
export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = Object.freeze({ processes: 1024, nice: 10 });

const SandboxObjectSchema = z.strictObject({
  /** workspace-write: the workdir is writable; read-only: nothing is; off: no sandbox at all. */
  mode: SandboxModeSchema.default("workspace-write"),
  network: NetworkSettingSchema.default("none"),
  /** Extra paths made visible read-only (a hidden folder's subfolder, say). */
  read: z.array(z.string().min(1)).default([]),
  /** Extra writable paths. */
  write: z.array(z.string().min(1)).default([]),
  /** Agent ids or globs whose own file may say `mode: off` or `network: all`; config only. */
  allow_unsandboxed: z.array(z.string().min(1)).default([]),
  /**
   * Host unix sockets sandboxed children may connect to (config only: an agent file may not widen
   * its sandbox). Listing any runs every child of the daemon without the seccomp filter.
   */
  unix_sockets: z.array(z.string().min(1)).default([]),
  /**
   * `refuse` (default): a listed name that resolves to a private, link-local, CGNAT, unique-local or
   * other internal address is refused by the proxy and `http_request`; `allow`: let it through
   * (intranet hosts). Loopback stays refused unless listed itself. Config only.
   */
  private_addresses: z.enum(["refuse", "allow"]).default("refuse"),
  /** What one sandboxed call may consume (processes, CPU priority); an agent file may only narrow it. */
  limits: SandboxLimitsSchema.default(DEFAULT_SANDBOX_LIMITS),
});

/** The daemon-wide `sandbox:` of config.yaml; `sandbox: off` is short for `{ mode: off }`. */
export const SandboxSettingsSchema = z.union([
  z.literal("off").transform(() => SandboxObjectSchema.parse({ mode: "off" })),
  SandboxObjectSchema,
]);
/** Config `sandbox:` as parsed, the operator-only lists (`allow_unsandboxed`) included. */
export type SandboxConfig = z.infer<typeof SandboxObjectSchema>;
/** The sandbox of one agent or server: config `sandbox:` without what only the operator decides. */
export type SandboxSettings = Omit<SandboxConfig, "allow_unsandboxed" | "private_addresses">;

/**
 * An agent's (or an MCP server's) `sandbox:`: what it sets overrides the daemon's setting; `read`
 * and `write` add to the daemon's lists; `limits` may only narrow the daemon's (a file that an
 * agent can write must not lift what bounds its own fork bomb). `sandbox: off` is short for `{ mode: off }`. It has no
 * `unix_sockets`: only config may open a host socket.
 */
export const SandboxOverrideSchema = z.union([
  z.literal("off").transform((): SandboxOverrideObject => ({ mode: "off" })),
  z.strictObject({
    mode: SandboxModeSchema.optional(),
    network: NetworkSettingSchema.optional(),
    read: z.array(z.string().min(1)).optional(),
    write: z.array(z.string().min(1)).optional(),
    /** Lower limits only: a higher `processes` or a lower `nice` than config's is not taken. */
    limits: z.strictObject({ processes: ProcessesSchema.optional(), nice: NiceSchema.optional() }).optional(),
  }),
]);
export type SandboxOverride = z.infer<typeof SandboxOverrideSchema>;

interface SandboxOverrideObject {
  mode?: SandboxMode | undefined;
  network?: NetworkSetting | undefined;
  read?: string[] | undefined;
  write?: string[] | undefined;
  limits?: { processes?: number | undefined; nice?: number | undefined } | undefined;
}

/**
 * The settings for one agent or server: `override` over `base`, its `read` / `write` paths
 * resolved against `baseDirectory` (`~/` is the home folder).
 */
export function mergeSandboxSettings(
  base: SandboxSettings,
  override: SandboxOverride | undefined,
  baseDirectory: string,
): SandboxSettings {
  const resolve = (paths: readonly string[]) =>
    paths.map((entry) => resolveSandboxPath(entry, baseDirectory));
  return {
    mode: override?.mode ?? base.mode,
    network: override?.network ?? base.network,
    read: [...base.read, ...resolve(override?.read ?? [])],
    write: [...base.write, ...resolve(override?.write ?? [])],
    unix_sockets: base.unix_sockets,
    limits: narrowedLimits(base.limits, override?.limits),
  };
}

/** The base limits, each lowered (never raised) by what the override says. */
function narrowedLimits(
  base: SandboxLimits,
  override: SandboxOverrideObject["limits"] | undefined,
): SandboxLimits {
  return {
    processes: Math.min(base.processes, override?.processes ?? base.processes),
    nice: Math.max(base.nice, override?.nice ?? base.nice),
  };
}

/** An absolute path: `~/x` under the home folder, a relative one under `baseDirectory`. */
export function resolveSandboxPath(entry: string, baseDirectory: string): string {
  if (entry === "~") return os.homedir();
  if (entry.startsWith("~/")) return path.join(os.homedir(), entry.slice(2));
  return path.resolve(baseDirectory, entry);
}
