import { existsSync, readFileSync } from "node:fs";

/** `Key=value` lines of a systemd unit, by section (the last value of a repeated key wins). */
export function unitSettings(text: string): Record<string, Record<string, string>> {
  const sections: Record<string, Record<string, string>> = {};
  let current = "";
  for (const line of text.split("\n").map((raw) => raw.trim())) {
    if (line === "" || line.startsWith("#")) continue;
    const section = /^\[(.+)\]$/.exec(line)?.[1];
    if (section) sections[(current = section)] ??= {};
    else {
      const [key, ...value] = line.split("=");
      (sections[current] ??= {})[key ?? ""] = value.join("=");
    }
  }
  return sections;
}

/** systemd's boolean spelling. */
export function isOn(value: string | undefined): boolean {
  return value !== undefined && ["1", "yes", "true", "on"].includes(value.toLowerCase());
}

/** What an outer bubblewrap does to stand for one `[Service]` setting, and what it leaves out. */
interface Emulation {
  /** Outer bubblewrap arguments, in order after `--dev-bind / /`. */
  arguments: string[];
  /** What the emulation does not reproduce, for the reader of a failure. */
  notEmulated?: string;
}

/** The pseudo-devices PrivateDevices= keeps (its /dev/pts, /dev/shm are fresh too). */
const PRIVATE_DEVICES = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];

const existing = (paths: string[]) => paths.filter((entry) => existsSync(entry));
const readOnly = (paths: string[]) => existing(paths).flatMap((entry) => ["--ro-bind", entry, entry]);

/**
 * The mount side of each hardening setting, as systemd sets it up (systemd.exec(5)), reproduced
 * with an outer bubblewrap. `privateFolder` is the service's own folder: PrivateTmp= gives the
 * service a /tmp holding only what it made, so it is bound back into the fresh /tmp.
 */
export function emulationOf(setting: string, value: string, privateFolder: string): Emulation | undefined {
  switch (setting) {
    case "ProtectSystem":
      if (value === "strict") {
        // Everything read-only but the API file systems (/dev, /proc, /sys) and the state folders.
        return {
          arguments: [
            ...["--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--bind", "/proc", "/proc"],
            ...["--bind", privateFolder, privateFolder],
          ],
        };
      }
      if (value === "full") return { arguments: readOnly(["/usr", "/boot", "/efi", "/etc"]) };
      return isOn(value) ? { arguments: readOnly(["/usr", "/boot", "/efi"]) } : { arguments: [] };
    case "ProtectHome":
      if (value === "read-only") return { arguments: readOnly(["/home", "/root", "/run/user"]) };
      if (value === "tmpfs" || isOn(value))
        return {
          arguments: existing(["/home", "/root", "/run/user"]).flatMap((entry) => ["--tmpfs", entry]),
        };
      return { arguments: [] };
    case "PrivateTmp":
      return isOn(value)
        ? { arguments: ["--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--bind", privateFolder, privateFolder] }
        : { arguments: [] };
    case "PrivateDevices":
      return isOn(value)
        ? {
            arguments: [
              ...["--tmpfs", "/dev"],
              ...existing(PRIVATE_DEVICES).flatMap((device) => ["--dev-bind", device, device]),
              ...["--dir", "/dev/shm", "--dir", "/dev/pts"],
            ],
            notEmulated: "its system call filter (@raw-io) and device cgroup",
          }
        : { arguments: [] };
    case "ProtectKernelTunables":
      // /proc/sys and friends, and /sys, read-only: mounts over parts of /proc.
      return isOn(value)
        ? {
            arguments: [
              ...readOnly(["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"]),
              ...readOnly(["/sys"]),
            ],
          }
        : { arguments: [] };
    case "ProtectKernelLogs":
      return isOn(value)
        ? { arguments: existsSync("/proc/kmsg") ? ["--ro-bind", "/dev/null", "/proc/kmsg"] : [] }
        : { arguments: [] };
    case "ProtectControlGroups":
      return isOn(value) ? { arguments: readOnly(["/sys/fs/cgroup"]) } : { arguments: [] };
    case "ProtectKernelModules":
      return isOn(value)
        ? {
            arguments: existing(["/usr/lib/modules", "/lib/modules"]).flatMap((entry) => ["--tmpfs", entry]),
            notEmulated: "its system call filter (@module)",
          }
        : { arguments: [] };
    case "NoNewPrivileges":
      // The outer bubblewrap sets no_new_privs on what it runs: always on in the emulation.
      return { arguments: [] };
    default:
      return undefined;
  }
}

/** The mount namespace of a service with these `[Service]` settings, as outer bubblewrap arguments. */
export function serviceEmulation(
  service: Record<string, string>,
  privateFolder: string,
): { arguments: string[]; emulated: string[]; notEmulated: string[] } {
  const args: string[] = [];
  const emulated: string[] = [];
  const notEmulated: string[] = [];
  // ProtectSystem=strict re-roots the tree: it goes first, the others go over it.
  const keys = Object.keys(service).sort(
    (a, b) => Number(b === "ProtectSystem") - Number(a === "ProtectSystem"),
  );
  for (const key of keys) {
    const emulation = emulationOf(key, service[key] ?? "", privateFolder);
    if (emulation === undefined) continue;
    args.push(...emulation.arguments);
    emulated.push(`${key}=${service[key]}`);
    if (emulation.notEmulated) notEmulated.push(`${key}: ${emulation.notEmulated}`);
  }
  return { arguments: args, emulated, notEmulated };
}

/** The unit file's `[Service]` settings. */
export function serviceSettings(unitFile: string): Record<string, string> {
  return unitSettings(readFileSync(unitFile, "utf8")).Service ?? {};
}
