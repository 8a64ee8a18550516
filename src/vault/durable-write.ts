import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import path from "node:path";

/**
 * Replaces `file` with `text` (mode 0600) so a crash leaves the old or the new content, never a torn
 * file: a uniquely named temp file beside it, fsync, rename, then fsync of the folder.
 */
export async function writeFileDurably(file: string, text: string): Promise<void> {
  const folder = path.dirname(file);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const temporary = path.join(folder, `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const handle = await open(temporary, "wx", 0o600);
    try {
      await handle.writeFile(text, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  const directory = await open(folder, "r").catch(() => undefined);
  if (directory) {
    await directory.sync().catch(() => undefined);
    await directory.close();
  }
}
