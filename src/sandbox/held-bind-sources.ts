import { closeSync, fstatSync, openSync, readlinkSync } from "node:fs";
import path from "node:path";
import { AgentdError } from "../errors/agentd-error.js";
import { plantedLinkTest } from "./planted-links.js";

/** open(2)'s O_PATH (the same on x86_64 and aarch64; Node does not name it): a handle, no access. */
const O_PATH = 0o10000000;
const O_NOFOLLOW = 0o400000;
/** Links followed before a chain counts as a loop (the kernel's limit, ELOOP). */
const MAX_LINK_HOPS = 40;

/**
 * The sources of a sandbox's binds, each held open (O_PATH) by the daemon and handed to bubblewrap
 * as a descriptor (`--bind-fd N DEST`, `--ro-bind-fd N DEST`), so that what it binds is what was
 * checked, not whatever a path leads to once it starts: bubblewrap resolves a `--bind SRC` path
 * again when it sets up, milliseconds later, and a sandboxed process (another agent's, sharing a
 * folder) could swap a folder on the way for a link in that window. bubblewrap checks after the
 * mount that it mounted the descriptor's own file (else it stops: "Race condition binding dirfd").
 *
 * Each source is a real path the layout found (sandboxMounts); it is opened now and refused unless
 * the descriptor's path is still that path (nothing on the way was swapped since). The `read:` and
 * `write:` paths of the policy (`linkChecked`) are opened one folder at a time without following a
 * link inside a folder a sandbox may write (planted-links.ts), so the check and the descriptor are
 * one step: nothing can swap a link in after the check.
 */
export class HeldBindSources {
  readonly #owner: string;
  readonly #firstChildDescriptor: number;
  /** Descriptors in the order their binds were asked for: the child gets each at first + index. */
  readonly #descriptors: number[] = [];
  /** Descriptors opened by a walk (policy `read:`/`write:` paths), by the real path they hold. */
  readonly #walked = new Map<string, number>();

  /** `firstChildDescriptor`: the child's descriptor number of the first source (its extra stdio). */
  constructor(owner: string, firstChildDescriptor: number) {
    this.#owner = owner;
    this.#firstChildDescriptor = firstChildDescriptor;
  }

  /**
   * Opens each of `entries` (a policy's own `read:`/`write:` paths) without following a link that
   * lies inside `writableFolders()`; throws SANDBOX_UNAVAILABLE when one leads through such a link.
   * Returns where each leads (undefined: missing): the layout must take these real paths, not
   * resolve the entries again (pinResolutions), or a link planted in between would decide them.
   */
  walk(entries: readonly string[], writableFolders: () => Iterable<string>): Map<string, string | undefined> {
    const planted = plantedLinkTest(writableFolders);
    const leads = new Map<string, string | undefined>();
    for (const entry of entries) {
      const descriptor = this.#openWalking(path.resolve(entry), planted);
      if (descriptor === undefined) {
        leads.set(entry, undefined);
        continue;
      }
      const real = descriptorPath(descriptor);
      leads.set(entry, real);
      if (this.#walked.has(real)) closeSync(descriptor);
      else this.#walked.set(real, descriptor);
    }
    return leads;
  }

  /** bubblewrap's arguments binding `source` (a real path) onto itself, by descriptor. */
  bind(source: string, access: "read-only" | "writable"): string[] {
    const descriptor = this.#walked.get(source) ?? this.#openReal(source);
    this.#walked.delete(source);
    this.#descriptors.push(descriptor);
    const number = this.#firstChildDescriptor + this.#descriptors.length - 1;
    return [access === "read-only" ? "--ro-bind-fd" : "--bind-fd", String(number), source];
  }

  /** The descriptors for the child's stdio, in order (from `firstChildDescriptor` on). */
  get descriptors(): readonly number[] {
    return this.#descriptors;
  }

  /** Closes every descriptor (once the child is spawned, or when it will not be). */
  close(): void {
    for (const descriptor of [...this.#descriptors, ...this.#walked.values()]) {
      try {
        closeSync(descriptor);
      } catch {
        // Closed already.
      }
    }
    this.#descriptors.length = 0;
    this.#walked.clear();
  }

  /** `source` opened as it is now, refused unless it still is that real path and no link. */
  #openReal(source: string): number {
    let descriptor: number;
    try {
      descriptor = openSync(source, O_PATH | O_NOFOLLOW);
    } catch (error) {
      throw this.#changed(source, error);
    }
    let same = false;
    try {
      same = !fstatSync(descriptor).isSymbolicLink() && descriptorPath(descriptor) === source;
    } finally {
      if (!same) closeSync(descriptor);
    }
    if (!same) throw this.#changed(source);
    return descriptor;
  }

  /**
   * `entry` opened one name at a time from `/`, each looked up inside the folder already held
   * (`/proc/self/fd/N/name`, O_NOFOLLOW): a link met is followed only when it lies outside every
   * writable folder (the operator's own), else refused. Undefined when the entry is missing.
   */
  #openWalking(entry: string, planted: (link: string) => boolean): number | undefined {
    let current = openSync("/", O_PATH);
    let pending = entry.split(path.sep).filter((part) => part !== "" && part !== ".");
    let hops = 0;
    try {
      while (pending.length > 0) {
        const name = pending.shift() as string;
        const held = `/proc/self/fd/${current}/${name}`;
        let next: number;
        try {
          next = openSync(held, O_PATH | O_NOFOLLOW);
        } catch {
          return undefined;
        }
        if (!fstatSync(next).isSymbolicLink()) {
          closeSync(current);
          current = next;
          continue;
        }
        closeSync(next);
        const link = path.join(descriptorPath(current), name);
        if (planted(link) || ++hops > MAX_LINK_HOPS) {
          throw new AgentdError(
            "SANDBOX_UNAVAILABLE",
            `cannot sandbox ${this.#owner}: ${entry} leads through ${link}, a link inside a folder agents write`,
            { hint: "a sandboxed process may have planted it; remove that link" },
          );
        }
        const target = readlinkSync(held);
        const parts = target.split(path.sep).filter((part) => part !== "" && part !== ".");
        if (path.isAbsolute(target)) {
          closeSync(current);
          current = openSync("/", O_PATH);
        }
        pending = [...parts, ...pending];
      }
      const opened = current;
      current = -1;
      return opened;
    } finally {
      if (current !== -1) closeSync(current);
    }
  }

  #changed(source: string, cause?: unknown): AgentdError {
    return new AgentdError(
      "SANDBOX_UNAVAILABLE",
      `cannot sandbox ${this.#owner}: ${source} changed while the sandbox was set up`,
      {
        hint: "a sandboxed process may have swapped a folder on its way for a link; retry, and look for links there",
        cause,
      },
    );
  }
}

/** The path a descriptor holds, as the kernel names it now. */
function descriptorPath(descriptor: number): string {
  return readlinkSync(`/proc/self/fd/${descriptor}`);
}
