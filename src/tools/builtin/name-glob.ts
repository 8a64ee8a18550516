import picomatch from "picomatch";

/**
 * A file-name filter from a glob, matched by picomatch: `*`, `**`, `?`, `[ab]`, `{ts,tsx}`,
 * `{1..3}` and the rest of bash's glob forms. A pattern without `/` is matched against the base
 * name (`*.ts`), one with `/` against the path relative to the workdir (`src/**\/*.ts`). Dot files
 * match like any other file: the workdir walk already skips `.git`.
 */
export function nameGlob(pattern: string): (relativePath: string) => boolean {
  const byPath = pattern.includes("/");
  const matches = picomatch(pattern, { dot: true });
  return (relativePath) => matches(byPath ? relativePath : (relativePath.split("/").pop() ?? ""));
}
