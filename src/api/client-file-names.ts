import path from "node:path";

/**
 * A message of the daemon's as a client may read it: the files of `data_dir` it names relative to
 * data_dir, and `file` (the error's own file, when absolute and outside data_dir) by its name only.
 * A client (even one holding only a `read` token) learns which state file is at fault, never where
 * the host keeps it; the daemon's log has the full path.
 */
export function withClientFileNames(text: string, dataDirectory: string | undefined, file?: string): string {
  let shown = text;
  if (dataDirectory !== undefined) {
    const root = path.resolve(dataDirectory);
    shown = shown.split(`${root}${path.sep}`).join("");
  }
  if (file !== undefined && path.isAbsolute(file)) shown = shown.split(file).join(path.basename(file));
  return shown;
}
