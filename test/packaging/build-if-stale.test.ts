import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const SCRIPT = path.resolve(import.meta.dirname, "../../scripts/build-if-stale.mjs");

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
      private: true,
      scripts: { build: `node -e "require('fs').writeFileSync('built', '')"` },
    }),
  );
  for (const [file, text] of [
    ["src/cli/main.ts", "export {};\n"],
    ["dist/cli/main.js", "export {};\n"],
    ["tsconfig.json", "{}\n"],
    ["tsconfig.build.json", "{}\n"],
  ] as const) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  const touch = (file: string, secondsAgo: number) => {
    const time = new Date(Date.now() - secondsAgo * 1_000);
    utimesSync(path.join(root, file), time, time);
  };
  for (const file of ["src/cli/main.ts", "tsconfig.json", "tsconfig.build.json", "package.json"])
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
});
