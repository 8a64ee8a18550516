import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";
import { z } from "zod";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** What `npm pack --json` says of the tarball it made: its file name and the paths it holds. */
const PackSchema = z.array(
  z.object({ filename: z.string(), files: z.array(z.object({ path: z.string() })) }),
);

/** The tarball `npm pack` makes of this repository: its file name and the paths inside it. */
export interface PackedTarball {
  filename: string;
  files: { path: string }[];
}

/** Every file under `entry` (a file or a folder, from the root), as `path size mtime` lines. */
function fingerprintLines(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (!existsSync(full)) return [];
  const stat = statSync(full);
  if (!stat.isDirectory()) return [`${entry} ${stat.size} ${stat.mtimeMs}`];
  return readdirSync(full)
    .sort()
    .flatMap((name) => fingerprintLines(path.join(entry, name)));
}

/**
 * What `npm pack` would pack, as one hash: package.json, and the size and modification time of
 * every file its `files` list names, with the README and the licence npm always adds. A build, an
 * edit of the docs or of the list makes another.
 */
function packFingerprint(): string {
  const manifest = readFileSync(path.join(ROOT, "package.json"), "utf8");
  const { files } = z.object({ files: z.array(z.string()) }).parse(JSON.parse(manifest));
  const hash = createHash("sha256").update(manifest);
  for (const entry of ["README.md", "LICENSE", ...files])
    hash.update(fingerprintLines(entry).join("\n")).update("\n");
  return hash.digest("hex").slice(0, 16);
}

/**
 * `npm pack` of this repository (from the dist/ that `npm test` built, `--ignore-scripts` so that
 * `prepare` does not rebuild the dist/ other tests are running), copied into `folder`.
 *
 * Packed once per state of the packed files and kept in the temp folder: the pack reads and
 * gzips some 4 MB, 6 CPU-s on a loaded machine, and two test files pack the same files. The
 * tarball of an earlier state of this checkout is removed when a new one is made; one made by
 * another test file at the same moment wins the rename and is used.
 */
export async function packTarballInto(folder: string): Promise<PackedTarball> {
  const checkout = createHash("sha256").update(ROOT).digest("hex").slice(0, 8);
  const prefix = `agentd-packed-${checkout}-`;
  const cache = path.join(tmpdir(), `${prefix}${packFingerprint()}`);
  const described = path.join(cache, "pack.json");
  if (!existsSync(described)) {
    const making = mkdtempSync(path.join(tmpdir(), "agentd-packing-"));
    try {
      const packed = await execa(
        "npm",
        ["pack", "--json", "--ignore-scripts", "--pack-destination", making],
        {
          cwd: ROOT,
        },
      );
      writeFileSync(path.join(making, "pack.json"), packed.stdout);
    } catch (error) {
      rmSync(making, { recursive: true, force: true });
      throw error;
    }
    try {
      renameSync(making, cache);
      for (const name of readdirSync(tmpdir()))
        if (name.startsWith(prefix) && path.join(tmpdir(), name) !== cache)
          rmSync(path.join(tmpdir(), name), { recursive: true, force: true });
    } catch {
      // Another test file's pack got there first: use that one.
      rmSync(making, { recursive: true, force: true });
    }
  }
  const [tarball] = PackSchema.parse(JSON.parse(readFileSync(described, "utf8")));
  if (tarball === undefined) throw new Error("npm pack made no tarball");
  copyFileSync(path.join(cache, tarball.filename), path.join(folder, tarball.filename));
  return tarball;
}
