import { execFileSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const SCRIPT = path.resolve(import.meta.dirname, "../../scripts/build-if-stale.mjs");
const PACKAGE = JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../package.json"), "utf8")) as {
  scripts: Record<string, string>;
};

/**
 * A project shaped like this one, whose `npm run build` only leaves a mark: `npm start`'s first
 * step (scripts/build-if-stale.mjs) is run in it, never in the repository (other tests use dist/).
 */
function projectWithBuildMark(): {
  root: string;
  mark: string;
  touch(file: string, secondsAgo: number): void;
} {
  const root = mkdtempSync(path.join(tmpdir(), "agentd-stale-"));
  const mark = path.join(root, "built");
  mkdirSync(path.join(root, "scripts"));
  copyFileSync(SCRIPT, path.join(root, "scripts", "build-if-stale.mjs"));
  writeFileSync(
    path.join(root, "package.json"),
    JSON.stringify({
      name: "stale-check",
      version: "1.0.0",
      bin: { "stale-check": "bin.js" },
      // agentd's own prepare step: `npx agentd` in a clone runs it.
      scripts: {
        build: `node -e "require('fs').writeFileSync('built', '')"`,
        prepare: PACKAGE.scripts["prepare"],
      },
    }),
  );
  for (const [file, text] of [
    ["src/cli/main.ts", "export {};\n"],
    ["dist/cli/main.js", "export {};\n"],
    ["tsconfig.json", "{}\n"],
    ["tsconfig.build.json", "{}\n"],
    ["bin.js", "#!/usr/bin/env node\nconsole.log('ran');\n"],
  ] as const) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  const touch = (file: string, secondsAgo: number) => {
    const time = new Date(Date.now() - secondsAgo * 1_000);
    utimesSync(path.join(root, file), time, time);
  };
  chmodSync(path.join(root, "bin.js"), 0o755);
  for (const file of ["src/cli/main.ts", "tsconfig.json", "tsconfig.build.json", "package.json", "bin.js"])
    touch(file, 60);
  return { root, mark, touch };
}

describe("npm start's build step", () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("does not rebuild when dist/ is newer than every source, and rebuilds once a source changed", () => {
    const project = projectWithBuildMark();
    root = project.root;
    const run = () =>
      execFileSync(process.execPath, ["scripts/build-if-stale.mjs"], { cwd: project.root, stdio: "pipe" });
    project.touch("dist/cli/main.js", 10);
    run();
    expect(existsSync(project.mark)).toBe(false);

    project.touch("src/cli/main.ts", 0);
    run();
    expect(existsSync(project.mark)).toBe(true);
  });

  it("`npx agentd` in a clone whose dist/ is current runs the command without building", () => {
    const project = projectWithBuildMark();
    root = project.root;
    project.touch("dist/cli/main.js", 10);
    // npx installs the folder into its own cache and runs the folder's `prepare` on the way.
    const output = execFileSync("npx", ["--offline", "--yes", "stale-check"], {
      cwd: project.root,
      env: { ...process.env, npm_config_cache: path.join(project.root, ".npm-cache") },
      encoding: "utf8",
      stdio: "pipe",
    });
    expect(output).toContain("ran");
    expect(existsSync(project.mark)).toBe(false);
  });
});
