import { describe, expect, it } from "vitest";
import { sedScriptRuns } from "../../src/permissions/sed-script.js";

describe("whether a sed script runs commands", () => {
  it.each([
    "e",
    "1e cmd",
    "$e cmd",
    "/x/e cmd",
    "/x/,/y/e cmd",
    "0~1e cmd",
    "1!e cmd",
    "1,+2 e cmd",
    "\\%x%e cmd",
    "/x/I e cmd",
    "s/x/y/e",
    "s|x|y|ge",
    "s/x/y/;e",
    "1{e cmd\n}",
    "y/a/b/;s/x/y/e",
    "p;n;e",
    "s/x/y", // unfinished: not readable, so it counts as running
    "k", // no such command
  ])("%j runs", (script) => {
    expect(sedScriptRuns(script)).toBe(true);
  });

  it.each([
    "p",
    "1,80p",
    "/start/,/end/p",
    "s/e/E/g",
    "s/x/y/2",
    "s/x/y/w out.txt",
    "/error/d",
    "$a footer; e not a command",
    "1i header",
    "y/abc/xyz/",
    ":a;N;$!ba;s/\\n/ /g",
    "s#/usr/e#/opt#g",
    "# e comment\np",
    "w /dev/stdout",
    "10q",
    "l 5",
  ])("%j does not run", (script) => {
    expect(sedScriptRuns(script)).toBe(false);
  });
});
