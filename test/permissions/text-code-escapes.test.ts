import { beforeAll, describe, expect, it } from "vitest";
import { checkPermission } from "../../src/permissions/permission-check.js";
import { loadBashParser } from "../../src/permissions/shell-parser.js";

beforeAll(loadBashParser);

/** sed and awk trusted by name: their doubts are lifted, a deny rule still holds. */
const TEXT_TOOLS = { allow: ["shell(sed *)", "shell(awk *)"], ask: [], deny: ["shell(rm *)"] };

const decide = (command: string) => checkPermission(TEXT_TOOLS, "shell", { kind: "shell", command }).decision;

describe("a command a sed or awk program runs, written so that a line-by-line reading misses it", () => {
  it.each([
    // GNU sed: a backslash at the end of an `e` command's line goes on to the next line, which runs too.
    "sed $'1e date\\\\\\nrm keep' file",
    "sed '1e date\\\nrm keep' file",
    "sed -e '1e date\\' -e 'rm keep' file",
    // awk: octal and hexadecimal escapes in a string are its characters to system().
    "awk 'BEGIN { system(\"r\\155 keep\") }'",
    "awk 'BEGIN { system(\"r\\x6d keep\") }'",
    "awk 'BEGIN { system(\"\\162\\155 keep\") }'",
  ])("denies %s", (command) => {
    expect(decide(command)).toBe("deny");
  });

  it.each(["sed '1e date\\\\\np' file", "sed '1e date\np' file", "awk 'BEGIN { system(\"d\\141te\") }'"])(
    "still allows %s",
    (command) => {
      expect(decide(command)).toBe("allow");
    },
  );
});
