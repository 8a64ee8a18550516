import { lstatSync, realpathSync } from "node:fs";
import path from "node:path";
import { AgentdError } from "../errors/agentd-error.js";
import { isWithin } from "../util/path-within.js";

/**
 * The `read:` or `write:` paths that do not lead elsewhere through a link a sandboxed process could
 * have made: a link on their way that lies inside a folder some sandbox may write (this child's
 * workdir and write paths, every agent's workdir and write paths). bubblewrap binds what a path
 * leads to, so such a link — planted while the path was missing, by another agent sharing the
 * folder, or after renaming a folder above the path — would make the bind whatever it points to:
 * another agent's workspace, any folder the daemon may write. Such a path is left out, as a
 * missing one is. Links outside those folders (the operator's own, `~/.config/gh` into a dotfiles
 * checkout) are followed as before.
 */
export function withoutPlantedLinks(
  entries: readonly string[],
  writableFolders: () => Iterable<string>,
): string[] {
  const insideWritable = plantedLinkTest(writableFolders);
  return entries.filter((entry) => !linksOnTheWay(path.resolve(entry)).some(insideWritable));
}

/**
 * Whether a link at this path may have been planted: it lies inside one of `writableFolders` (as
 * written or as its real path), not being that folder itself. The folders are looked up only once
 * a link is met: most paths have none on their way.
 */
export function plantedLinkTest(writableFolders: () => Iterable<string>): (link: string) => boolean {
  let folders: string[] | undefined;
  return (link) => {
    folders ??= bothForms(writableFolders());
    return folders.some((folder) => folder !== link && isWithin(link, folder));
  };
}

/** Every folder on the way to `entry` (itself included) that is a link, up to the first missing one. */
function linksOnTheWay(entry: string): string[] {
  const links: string[] = [];
  let prefix = path.parse(entry).root;
  for (const part of entry.slice(prefix.length).split(path.sep)) {
    if (part === "") continue;
    prefix = path.join(prefix, part);
    try {
      if (lstatSync(prefix).isSymbolicLink()) links.push(prefix);
    } catch {
      break; // Missing from here on: the path is skipped as missing.
    }
  }
  return links;
}

/** Each folder as written (resolved) and as its real path, where it exists. */
function bothForms(folders: Iterable<string>): string[] {
  const forms = new Set<string>();
  for (const folder of folders) {
    forms.add(path.resolve(folder));
    try {
      forms.add(realpathSync.native(folder));
    } catch {
      // Missing: its path as written is all there is.
    }
  }
  return [...forms];
}

/**
 * Throws SANDBOX_UNAVAILABLE when one of `entries` now leads through a link inside
 * `writableFolders`: checked again right before bubblewrap starts, since a path checked when the
 * call was made can be swapped for a link while the call waits (for an approval, say), and
 * bubblewrap would bind what the link points to.
 */
export function assertNoPlantedLinks(
  entries: readonly string[],
  writableFolders: () => Iterable<string>,
  owner: string,
): void {
  const kept = new Set(withoutPlantedLinks(entries, writableFolders));
  const swapped = entries.find((entry) => !kept.has(entry));
  if (swapped === undefined) return;
  throw new AgentdError(
    "SANDBOX_UNAVAILABLE",
    `cannot sandbox ${owner}: ${swapped} became a link meanwhile`,
    {
      hint: "a sandboxed process may have planted it inside a folder agents write; remove that link",
    },
  );
}
