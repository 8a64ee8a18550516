import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SandboxProject } from "./sandbox-project.js";

// A daemon whose PATH holds a relative folder ahead of /usr/bin ("." or "bin", as some service
// files and shells' profiles write it): inside the sandbox it is a folder of the agent's workdir.
const pathBefore = process.env["PATH"];
process.env["PATH"] = `.:${pathBefore ?? "/usr/bin:/bin"}`;
afterAll(() => {
  process.env["PATH"] = pathBefore;
});

describe("the shell the shell tool starts", () => {
  it(
    "is the host's bash, not a `bash` an earlier call left in the workdir",
    { timeout: 60_000 },
    async () => {
      const project = new SandboxProject();
      try {
        // An earlier call (a hostile page's) leaves a `bash` that ignores the limits' preamble.
        const planted = path.join(project.workdir, "bash");
        writeFileSync(planted, '#!/bin/sh\necho "planted: $2"\n');
        chmodSync(planted, 0o755);
        const result = await project.shell("echo real");
        expect(result.output).toMatch(/^exit code 0\nstdout:\nreal\n/);
      } finally {
        project.dispose();
      }
    },
  );
});
