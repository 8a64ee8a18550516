// Permission check benchmark: time to judge one shell command against an agent's rules, per call
// (median and p99 over a corpus of realistic commands), for the check in dist/ and, as baselines
// measured in the same run: the check before the code classes of issue 25 (option allow-lists,
// arithmetic names, the sed reader), and the hand-written scanners the tree-sitter check replaced.
// Both baselines are the old commit's TypeScript, taken with `git show` and transpiled into a temp
// folder (with a node_modules link, so the old parser loads the same grammar).
// Every call gets a unique trailing comment, so no cached parse is reused.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { transformSync } from "esbuild";
import { QUICK } from "./bench-daemon.mjs";

/** The last commit with the hand-written scanners. */
const OLD_COMMIT = "185b0c1";
const OLD_FILES = [
  "permission-check",
  "permission-rule",
  "shell-permission",
  "shell-lexer",
  "shell-programs",
  "ansi-c-quote",
];
/** The last commit before the code classes of issue 25: its whole src/permissions folder. */
const CLASSES_BASE = "debab58";
const ROUNDS = QUICK ? 2 : 60;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const GRAMMAR = path.join(root, "vendor", "tree-sitter-bash", "tree-sitter-bash.wasm");

const RULES = {
  allow: [
    "shell(git status*)",
    "shell(git log*)",
    "shell(git diff*)",
    "shell(ls *)",
    "shell(cat *)",
    "shell(grep *)",
    "shell(rg *)",
    "shell(head *)",
    "shell(tail *)",
    "shell(wc *)",
    "shell(npm test*)",
    "shell(npm run *)",
    "shell(find *)",
    "shell(sed -n *)",
    "shell(echo *)",
    "shell(jq *)",
  ],
  ask: ["shell(git push*)"],
  deny: ["shell(rm -rf *)", "shell(curl *)", "shell(sudo *)"],
};

const CORPUS = [
  "git status",
  "git status --short",
  "git log --oneline -20",
  "git log --since='2 days ago' --pretty=format:'%h %an %s'",
  "git diff HEAD~1 -- src/",
  "git diff --stat main...HEAD",
  "ls -la",
  "ls -la src/ | head -50",
  "cat package.json",
  "cat README.md | head -100",
  "grep -rn 'TODO' src/ --include='*.ts'",
  'grep -rn "export function" src | wc -l',
  "rg -n 'AgentdError' src test",
  "head -n 40 src/index.ts",
  "tail -f logs/app.log | grep ERROR",
  "wc -l src/**/*.ts",
  "npm test",
  "npm test -- --run test/tools",
  "npm run build && npm test",
  "npm run lint 2>&1 | tail -20",
  "find . -name '*.ts' -not -path './node_modules/*' | head",
  "find src -type f -newer package.json",
  "sed -n '1,80p' src/app/daemon.ts",
  'echo "build finished at $(date)"',
  "echo done > status.txt",
  "jq '.dependencies' package.json",
  "cat data.json | jq -r '.items[] | .name'",
  "ls dist && cat dist/index.js | head -5",
  "mkdir -p out && cp -r src out/",
  "tar -czf backup.tgz src/",
  "python3 scripts/report.py --format json > report.json",
  "node scripts/check.mjs",
  "docker ps --format '{{.Names}}'",
  "curl -s https://example.com/api",
  "git push origin main",
  "rm -rf build/",
  'for f in src/*.ts; do wc -l "$f"; done',
  "if [ -f .env ]; then echo present; fi",
  "cat <<EOF > notes.md\n# Notes\n- item one\n- item two\nEOF",
  "export NODE_ENV=production && npm run build",
  "cd packages/core && npm test",
  "git log --format='%H' | head -1 | xargs git show --stat",
  "ls -1 | sort | uniq -c | sort -rn | head",
  "awk '{ print $1 }' access.log | sort | uniq -c",
  "sed -i 's/foo/bar/g' config.yaml",
  "grep -l 'import' $(find src -name '*.ts') | wc -l",
  "diff <(sort a.txt) <(sort b.txt)",
  "printf '%s\\n' one two three | tee list.txt",
  "bash -c 'echo nested'",
  "make test",
];

function percentile(sorted, fraction) {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];
}

/**
 * Times every check on the same commands, taking turns call by call (the order rotates), so a
 * busy machine slows each of them alike.
 */
function measureTogether(checks) {
  const samples = checks.map(() => []);
  let unique = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const command of CORPUS) {
      const text = `${command} # ${unique++}`;
      for (let turn = 0; turn < checks.length; turn++) {
        const index = (turn + unique) % checks.length;
        const started = performance.now();
        checks[index](text);
        samples[index].push(performance.now() - started);
      }
    }
  }
  return samples.map((list) => {
    list.sort((left, right) => left - right);
    return { median: percentile(list, 0.5), p99: percentile(list, 0.99), calls: list.length };
  });
}

function gitShow(commit, file) {
  return execFileSync("git", ["show", `${commit}:${file}`], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
}

function transpileInto(folder, commit, files) {
  for (const file of files) {
    const output = transformSync(gitShow(commit, `src/${file}.ts`), {
      loader: "ts",
      format: "esm",
      target: "es2023",
    })
      // The grammar came from the tree-sitter-bash package then; it is vendored now. (esbuild names
      // the module's own `require` require2, clear of the one CommonJS would give.)
      .code.replace(
        /require\d*\.resolve\("tree-sitter-bash\/tree-sitter-bash\.wasm"\)/,
        JSON.stringify(GRAMMAR),
      );
    mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    writeFileSync(path.join(folder, `${file}.js`), output);
  }
}

/** An old check, transpiled from git into a temporary folder; undefined when git cannot give it. */
async function loadCheckFrom(folder, commit, files) {
  try {
    transpileInto(folder, commit, files);
    const module = await import(pathToFileURL(path.join(folder, "permissions/permission-check.js")).href);
    if (module.checkPermission && files.includes("permissions/shell-parser")) {
      await (
        await import(pathToFileURL(path.join(folder, "permissions/shell-parser.js")).href)
      ).loadBashParser();
    }
    return module.checkPermission;
  } catch (error) {
    console.log(`(the check of git ${commit} could not be rebuilt: ${error.message.split("\n")[0]})`);
    return undefined;
  }
}

/** Every file of src/permissions at `commit`, and what they import from outside it. */
function permissionFilesAt(commit) {
  const listing = execFileSync("git", ["ls-tree", "--name-only", `${commit}`, "src/permissions/"], {
    cwd: root,
    encoding: "utf8",
  });
  const files = listing
    .split("\n")
    .filter((file) => file.endsWith(".ts"))
    .map((file) => file.slice("src/".length, -".ts".length));
  return [...files, "secrets/secret-template"];
}

const folder = mkdtempSync(path.join(tmpdir(), "agentd-bench-permissions-"));
try {
  const [loadAverage] = os.loadavg();
  console.log(`machine: ${os.cpus().length} cores, load average ${loadAverage?.toFixed(1)}`);
  const loadStarted = performance.now();
  const { checkPermission } = await import("../../dist/permissions/permission-check.js");
  await (await import("../../dist/permissions/shell-parser.js")).loadBashParser();
  console.log(`parser load (once, at start): ${(performance.now() - loadStarted).toFixed(1)} ms`);
  const oldCheck = await loadCheckFrom(
    path.join(folder, "scanners"),
    OLD_COMMIT,
    OLD_FILES.map((name) => `permissions/${name}`),
  );
  const classesFolder = path.join(folder, "before-classes");
  mkdirSync(classesFolder);
  symlinkSync(path.join(root, "node_modules"), path.join(classesFolder, "node_modules"));
  const beforeClasses = await loadCheckFrom(classesFolder, CLASSES_BASE, permissionFilesAt(CLASSES_BASE));
  const judge = (implementation) => (command) => implementation(RULES, "shell", { kind: "shell", command });

  // Warm both up before measuring.
  for (const command of CORPUS) {
    judge(checkPermission)(command);
    if (oldCheck) judge(oldCheck)(command);
    if (beforeClasses) judge(beforeClasses)(command);
  }
  const checks = [checkPermission, beforeClasses, oldCheck].filter(Boolean);
  const measured = measureTogether(checks.map(judge));
  const timing = (implementation) => measured[checks.indexOf(implementation)];
  const current = timing(checkPermission);
  console.log(
    `\npermission check per shell command, ${CORPUS.length} realistic commands x ${ROUNDS} rounds, the checks taking turns`,
  );
  console.log(
    `  current check: median ${(current.median * 1000).toFixed(1)} µs, p99 ${(current.p99 * 1000).toFixed(1)} µs`,
  );
  if (beforeClasses) {
    const before = timing(beforeClasses);
    console.log(
      `  before the code classes (git ${CLASSES_BASE}): median ${(before.median * 1000).toFixed(1)} µs, p99 ${(before.p99 * 1000).toFixed(1)} µs`,
    );
    console.log(
      `  rules' cost per check, ratio current/before-classes: median ${(current.median / before.median).toFixed(2)}x, p99 ${(current.p99 / before.p99).toFixed(2)}x`,
    );
    const changed = CORPUS.filter(
      (command) => judge(checkPermission)(command).decision !== judge(beforeClasses)(command).decision,
    );
    console.log(`  decisions changed by the classes: ${changed.length} of ${CORPUS.length}`);
    for (const command of changed) {
      const after = judge(checkPermission)(command);
      console.log(
        `    ${JSON.stringify(command)}: ${judge(beforeClasses)(command).decision} -> ${after.decision} (${after.reason})`,
      );
    }
  }
  if (oldCheck) {
    const baseline = timing(oldCheck);
    console.log(
      `  hand-written scanners (baseline): median ${(baseline.median * 1000).toFixed(1)} µs, p99 ${(baseline.p99 * 1000).toFixed(1)} µs`,
    );
    console.log(
      `  ratio current/scanners: median ${(current.median / baseline.median).toFixed(2)}x, p99 ${(current.p99 / baseline.p99).toFixed(2)}x`,
    );
    const differing = CORPUS.filter(
      (command) => judge(checkPermission)(command).decision !== judge(oldCheck)(command).decision,
    );
    console.log(`\ndecisions that changed (${differing.length} of ${CORPUS.length}):`);
    for (const command of differing) {
      const before = judge(oldCheck)(command).decision;
      const after = judge(checkPermission)(command);
      console.log(`  ${JSON.stringify(command)}: ${before} -> ${after.decision} (${after.reason})`);
    }
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
