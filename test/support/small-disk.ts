import { execFileSync } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, statSync, writeSync } from "node:fs";
import path from "node:path";
import type { AgentEvent } from "../../src/events/agent-event.js";
import type { DaemonProcess } from "./daemon-process.js";

/**
 * Mounts a tmpfs of `size` (e.g. "1m") on `folder`; false where this process may not mount (not
 * root, no CAP_SYS_ADMIN). The caller unmounts it (`unmount`).
 */
export function mountSmallTmpfs(folder: string, size: string): boolean {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", folder], {
      stdio: "pipe",
    });
    return true;
  } catch {
    return false;
  }
}

/**
 * Mounts on `folder` a btrfs file system (a sparse 128 MB image at `image`, on a loop device)
 * whose quota group is limited to `limit` (e.g. "4m"): a write past it fails with EDQUOT, for root
 * too. The kernel's user quotas would not do: root passes their limits (CAP_SYS_RESOURCE), and
 * tmpfs quotas need CONFIG_TMPFS_QUOTA. False where it cannot be had (not root, no loop device,
 * no btrfs in the kernel, no `mkfs.btrfs`/`btrfs` of btrfs-progs). The caller unmounts it.
 */
export function mountQuotaLimited(folder: string, image: string, limit: string): boolean {
  try {
    execFileSync("truncate", ["-s", "128m", image], { stdio: "pipe" });
    execFileSync("mkfs.btrfs", ["-q", "-M", image], { stdio: "pipe" });
    execFileSync("mount", ["-o", "loop", image, folder], { stdio: "pipe" });
  } catch {
    return false;
  }
  try {
    execFileSync("chmod", ["0700", folder], { stdio: "pipe" });
    execFileSync("btrfs", ["quota", "enable", folder], { stdio: "pipe" });
    execFileSync("btrfs", ["qgroup", "limit", limit, folder], { stdio: "pipe" });
    return true;
  } catch {
    unmount(folder);
    return false;
  }
}

/** Lazily unmounts `folder` (whatever still holds it open). */
export function unmount(folder: string): void {
  try {
    execFileSync("umount", ["-l", folder], { stdio: "pipe" });
  } catch {
    // not mounted any more
  }
}

/** Remounts the tmpfs on `folder` read-only (`true`) or read-write. */
export function remount(folder: string, readOnly: boolean): void {
  execFileSync("mount", ["-o", `remount,${readOnly ? "ro" : "rw"}`, folder], { stdio: "pipe" });
}

/** Writes `file` until the file system refuses more (or `limit` bytes): every byte of room is taken. */
export function fillUp(file: string, limit = Number.POSITIVE_INFINITY): number {
  const descriptor = openSync(file, "w");
  let written = 0;
  try {
    for (const chunk of [65_536, 4_096, 512, 1]) {
      const data = Buffer.alloc(chunk, 120);
      while (written + chunk <= limit) {
        try {
          written += writeSync(descriptor, data);
        } catch {
          break;
        }
      }
    }
  } finally {
    closeSync(descriptor);
  }
  return written;
}

/** Every `.jsonl` file under `folder`, by path. */
export function jsonlFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".jsonl"))
    .map((name) => path.join(folder, name))
    .filter((file) => statSync(file).isFile());
}

/** The lines of a JSONL file that are not whole JSON objects (torn or glued), and a missing last newline. */
export function tornLines(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const torn = text
    .split("\n")
    .slice(0, -1)
    .filter((line) => {
      try {
        const value = JSON.parse(line) as unknown;
        return typeof value !== "object" || value === null;
      } catch {
        return true;
      }
    })
    .map((line) => line.slice(0, 120));
  if (text !== "" && !text.endsWith("\n")) torn.push(`(no newline at the end) ${text.slice(-80)}`);
  return torn;
}

/** The events of `events/<agent>.jsonl` as they are on disk (whole lines only). */
export function eventsOnDisk(dataDirectory: string, agent: string): AgentEvent[] {
  let text: string;
  try {
    text = readFileSync(path.join(dataDirectory, "events", `${agent}.jsonl`), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as AgentEvent);
}

/** Follows GET /events from `after` (undefined: the beginning) to its end; returns the events and the cursor. */
export async function followMerged(
  daemon: DaemonProcess,
  after: string | undefined,
): Promise<{ events: AgentEvent[]; next: string | undefined }> {
  const events: AgentEvent[] = [];
  let cursor = after;
  for (;;) {
    const query = cursor === undefined ? "?limit=1000" : `?after=${encodeURIComponent(cursor)}&limit=1000`;
    const page = (await daemon.request("GET", `/events${query}`)).body as {
      events: AgentEvent[];
      next: string;
    };
    events.push(...page.events);
    cursor = page.next;
    if (page.events.length < 1000) return { events, next: cursor };
  }
}

/** GET /health's body. */
export interface HealthBody {
  status: string;
  reasons?: Array<{ code: string; error?: string; file?: string; message: string }>;
}

export async function health(daemon: DaemonProcess): Promise<HealthBody> {
  return (await daemon.request("GET", "/health")).body as HealthBody;
}
