import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { textReply } from "../support/scripted-llm-server.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

const scripted = useScriptedDaemon({
  reply: textReply("no findings"),
  agents: (project) => {
    project.writeAgent("security-audit", { description: "Audits the code" });
  },
});

/** The `sh` block under `## Examples` in docs/http-api.md, as a user copies it. */
function httpApiExamples(): string {
  const page = readFileSync(path.join(ROOT, "docs/http-api.md"), "utf8");
  const section = page.slice(page.indexOf("## Examples"));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error("docs/http-api.md has no sh block under ## Examples");
  return block;
}

describe("docs/http-api.md's curl examples", () => {
  it("run as written against a real daemon, each answered 2xx", { timeout: 60_000 }, async () => {
    const address = new URL(scripted.daemon.url).host;
    // What differs from a user's shell: this daemon's port, `npx agentd` being this checkout's bin
    // (a user's npx finds the same), and a curl that fails on any error status and ends a stream.
    const prelude = [
      "set -eo pipefail",
      `npx() { [ "$1" = agentd ] && shift; node ${JSON.stringify(path.join(ROOT, "bin/agentd.js"))} "$@"; }`,
      'curl() { local code=0; command curl --fail-with-body --max-time 5 "$@" || code=$?; ' +
        '[ "$code" = 28 ] && [[ " $* " == *" -sN "* ]] && return 0; return "$code"; }',
    ].join("\n");
    const script = `${prelude}\n${httpApiExamples().replaceAll("localhost:7070", address)}`;
    const { stdout } = await run("bash", ["-c", script], { cwd: scripted.project.root, timeout: 50_000 });
    // The jq line picks fields an agent has (a missing one would print null).
    expect(stdout).toMatch(/"id": "security-audit",\s+"valid": true,\s+"last_run": null/);
    expect(stdout).toMatch(/\{"run":"r_\w+","status":"queued"\}/);
    expect(stdout).toContain('"events":[{"id":1');
    expect(stdout).toContain("retry: 2000");
  });
});
