/**
 * A file-name filter from a simple glob: `*` any run of characters but `/`, `**` any run including
 * `/`, `?` one character, `{ts,tsx}` alternatives; everything else literal. A pattern without `/` is
 * matched against the base name (`*.ts`), one with `/` against the path relative to the workdir
 * (`src/**\/*.ts`).
 */
export function nameGlob(pattern: string): (relativePath: string) => boolean {
  let source = "";
  let braces = 0;
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index] as string;
    if (pattern.startsWith("**/", index)) {
      source += "(?:.*/)?";
      index += 2;
    } else if (pattern.startsWith("**", index)) {
      source += ".*";
      index += 1;
    } else if (character === "*") source += "[^/]*";
    else if (character === "?") source += "[^/]";
    else if (character === "{") {
      braces++;
      source += "(?:";
    } else if (character === "}" && braces > 0) {
      braces--;
      source += ")";
    } else if (character === "," && braces > 0) source += "|";
    else source += character.replace(/[.+^$(){}|[\]\\]/g, "\\$&");
  }
  source += ")".repeat(braces);
  const expression = new RegExp(`^${source}$`);
  const byPath = pattern.includes("/");
  return (relativePath) => expression.test(byPath ? relativePath : (relativePath.split("/").pop() ?? ""));
}
