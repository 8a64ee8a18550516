import { describe, expect, it } from "vitest";
import { scriptCandidates } from "../../src/sandbox/definition-paths.js";

const base = "/srv/project";

describe("the scripts a hook command runs", () => {
  it("are the programs named with a path and the files interpreters are given", () => {
    expect(scriptCandidates("./audit-log.sh", base)).toEqual(["/srv/project/audit-log.sh"]);
    expect(scriptCandidates("sh gates/reviewer-gate.sh", base)).toEqual([
      "/srv/project/gates/reviewer-gate.sh",
    ]);
    expect(scriptCandidates("cd tools && bash -e gate.sh --strict", base)).toEqual([
      "/srv/project/tools/gate.sh",
    ]);
    expect(scriptCandidates("MODE=ci node hooks/check.js; /opt/bin/notify", base)).toEqual([
      "/srv/project/hooks/check.js",
      "/opt/bin/notify",
    ]);
  });

  it("are read from an MCP server's command and arguments as written", () => {
    expect(scriptCandidates(["node", "--no-warnings", "tools/server.js", "--port", "7"], base)).toEqual([
      "/srv/project/tools/server.js",
    ]);
  });

  it("are not the files a command only reads or writes", () => {
    expect(scriptCandidates("cat > last-run.json", base)).toEqual([]);
    expect(scriptCandidates(`if grep -q '"read_file"'; then cat secret.txt >&2; exit 2; fi`, base)).toEqual(
      [],
    );
  });
});
