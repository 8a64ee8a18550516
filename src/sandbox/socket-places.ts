import path from "node:path";
import { isWithin } from "../util/path-within.js";
import { existingRealPath } from "./sandbox-mounts.js";

/**
 * Where hosts keep the unix sockets that speak for the user or hand out the machine: the runtime
 * dirs (session bus, gpg and ssh agents, Wayland, pipewire, podman), the system bus, systemd's
 * sockets, container engines (and podman's registry logins in /run/containers), libvirt and
 * snapd. Hidden in every sandbox: with the seccomp filter on they could not be reached anyway;
 * with it off (config lists `unix_sockets`) only the listed ones can.
 */
const SOCKET_PLACES = [
  "/run/user",
  "/run/dbus",
  "/var/run/dbus",
  "/run/systemd",
  "/var/run/docker.sock",
  "/run/docker.sock",
  "/run/docker",
  "/run/podman",
  "/run/containers",
  "/run/libpod",
  "/run/containerd",
  "/run/crio",
  "/run/libvirt",
  "/var/run/libvirt",
  "/run/snapd.socket",
  "/run/snapd-snap.socket",
  "/var/snap/lxd/common/lxd",
  "/var/lib/lxd/unix.socket",
  "/var/lib/incus/unix.socket",
];

/**
 * The socket places of this host, with those its environment names: `$XDG_RUNTIME_DIR`,
 * `$SSH_AUTH_SOCK`'s folder, the `unix:path=` of the D-Bus addresses, `$DOCKER_HOST`,
 * `$CONTAINER_HOST`, `$WAYLAND_DISPLAY` and `$GPG_AGENT_INFO`. A folder is taken only below the
 * top level (`/run/ssh/agent.sock` hides `/run/ssh`, `/agent.sock` only itself): never `/`, never
 * a folder like `/run` that holds what the system needs.
 */
export function hostSocketPlaces(environment: NodeJS.ProcessEnv): string[] {
  const places = [...SOCKET_PLACES];
  const variable = (name: string) => {
    const value = environment[name];
    return value === undefined || value === "" ? undefined : value;
  };
  const folderOrFile = (entry: string) => {
    const folder = path.dirname(entry);
    return folder.split("/").filter(Boolean).length >= 2 ? folder : entry;
  };
  const runtime = variable("XDG_RUNTIME_DIR");
  if (runtime !== undefined && path.isAbsolute(runtime)) {
    places.push(runtime.split("/").filter(Boolean).length >= 2 ? runtime : path.join(runtime, "bus"));
  }
  const agent = variable("SSH_AUTH_SOCK");
  if (agent !== undefined && path.isAbsolute(agent)) places.push(folderOrFile(agent));
  for (const name of ["DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS"]) {
    for (const address of (variable(name) ?? "").split(";")) {
      const found = /^unix:(?:.*,)?path=([^,]+)/.exec(address)?.[1];
      if (found !== undefined) places.push(decodeDbusValue(found));
    }
  }
  for (const name of ["DOCKER_HOST", "CONTAINER_HOST"]) {
    const found = /^unix:\/\/(\/.+)$/.exec(variable(name) ?? "")?.[1];
    if (found !== undefined) places.push(found);
  }
  const wayland = variable("WAYLAND_DISPLAY");
  if (wayland !== undefined && path.isAbsolute(wayland)) places.push(wayland);
  const gpg = variable("GPG_AGENT_INFO")?.split(":")[0];
  if (gpg !== undefined && path.isAbsolute(gpg)) places.push(gpg);
  return places.filter((entry) => path.isAbsolute(entry) && path.resolve(entry) !== "/");
}

/**
 * Files inside socket places the system itself needs, to show read-only: `/etc/resolv.conf` when
 * it leads into `/run/systemd/resolve` (systemd-resolved), or name resolution would fail.
 * `resolved`: real paths already found by the caller (see existingRealPath).
 */
export function neededInsideSocketPlaces(
  places: readonly string[],
  resolved?: Map<string, string | undefined>,
): string[] {
  const resolver = existingRealPath("/etc/resolv.conf", resolved);
  if (resolver === undefined) return [];
  const realPlaces = places.flatMap((entry) => existingRealPath(entry, resolved) ?? []);
  return realPlaces.some((place) => isWithin(resolver, place)) ? [resolver] : [];
}

/** A D-Bus address value with its `%xx` escapes undone. */
function decodeDbusValue(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
