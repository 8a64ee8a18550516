// Secret masking benchmark: time to mask one kilobyte of tool output, for the normalising masker
// in dist/ and, as the baseline measured in the same run, the exact-forms masker it replaced,
// rebuilt from git (commit below). Outputs: plain log lines, JSON, colourised grep output, and
// text holding secrets in several disguises; the redactor knows 20 secrets, as a busy vault would.
import { Buffer } from "node:buffer";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { transformSync } from "esbuild";
import { QUICK } from "./bench-daemon.mjs";

/** The last commit with the exact-forms masker. */
const OLD_COMMIT = "debab58";
const OLD_FILES = ["secret-redactor", "secret-encodings", "secret-template"];
const ROUNDS = QUICK ? 5 : 200;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const SECRETS = Array.from({ length: 20 }, (_, index) => [
  `s${index}`,
  `sk-${index}-${"x7Qz".repeat(5)}${index}`,
]);
const [, FIRST] = SECRETS[0];

const line = (index) =>
  `2026-01-31T09:00:${String(index % 60).padStart(2, "0")}Z INFO request ${index} GET /api/items?page=${index} 200 12ms\n`;
const OUTPUTS = {
  "plain log lines": Array.from({ length: 60 }, (_, index) => line(index)).join(""),
  JSON: JSON.stringify(
    Array.from({ length: 40 }, (_, index) => ({
      id: index,
      name: `item "${index}"`,
      path: `/srv/a/${index}`,
    })),
    null,
    2,
  ),
  "grep --color": Array.from(
    { length: 60 },
    (_, index) => `src/file-${index}.ts:${index}: const \x1b[01;31m\x1b[Kvalue\x1b[m\x1b[K = ${index};\n`,
  ).join(""),
  "secrets in disguise": [
    line(1),
    `token=${FIRST}\n`,
    `${encodeURIComponent(FIRST).toUpperCase()}\n`,
    `${Buffer.from(FIRST).toString("base64")}\n`,
    `'${FIRST.toUpperCase()}'\n`,
    `${[...FIRST].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}\n`,
    line(2).repeat(8),
  ].join(""),
};

/** The masker from git, transpiled into a temporary folder; undefined when git cannot give it. */
async function loadOld(folder) {
  try {
    for (const name of OLD_FILES) {
      const source = execFileSync("git", ["show", `${OLD_COMMIT}:src/secrets/${name}.ts`], {
        cwd: root,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      });
      const output = transformSync(source, { loader: "ts", format: "esm", target: "es2023" }).code;
      writeFileSync(path.join(folder, `${name}.js`), output);
    }
    return (await import(pathToFileURL(path.join(folder, "secret-redactor.js")).href)).SecretRedactor;
  } catch (error) {
    console.log(
      `(the old masker could not be rebuilt from git ${OLD_COMMIT}: ${error.message.split("\n")[0]})`,
    );
    return undefined;
  }
}

function redactorOf(Redactor) {
  const redactor = new Redactor();
  for (const [name, value] of SECRETS) redactor.add(name, value);
  return redactor;
}

/** Median microseconds per kilobyte over ROUNDS maskings of `text`. */
function perKilobyte(redactor, text) {
  for (let warm = 0; warm < 20; warm++) redactor.redact(`${text}${warm}`);
  const samples = [];
  for (let round = 0; round < ROUNDS; round++) {
    const unique = `${text}${round}`;
    const started = performance.now();
    redactor.redact(unique);
    samples.push(performance.now() - started);
  }
  samples.sort((left, right) => left - right);
  return ((samples[Math.floor(samples.length / 2)] ?? 0) * 1000) / (Buffer.byteLength(text) / 1024);
}

const folder = mkdtempSync(path.join(tmpdir(), "agentd-bench-masking-"));
try {
  const [loadAverage] = os.loadavg();
  console.log(`machine: ${os.cpus().length} cores, load average ${loadAverage?.toFixed(1)}`);
  const { SecretRedactor } = await import("../../dist/secrets/secret-redactor.js");
  const Old = await loadOld(folder);
  const current = redactorOf(SecretRedactor);
  const old = Old ? redactorOf(Old) : undefined;
  console.log(`\nmasking cost per KB of tool output, ${SECRETS.length} known secrets, median of ${ROUNDS}`);
  for (const [name, text] of Object.entries(OUTPUTS)) {
    const now = perKilobyte(current, text);
    const before = old ? perKilobyte(old, text) : undefined;
    const masked = (redactor) => (redactor.redact(text).match(/\[secret:/g) ?? []).length;
    console.log(
      `  ${name.padEnd(20)} normalising ${now.toFixed(1).padStart(6)} µs/KB` +
        (before === undefined
          ? ""
          : `, exact forms (baseline) ${before.toFixed(1).padStart(6)} µs/KB, ratio ${(now / before).toFixed(2)}x`) +
        `; masks found ${masked(current)}${old ? ` vs ${masked(old)}` : ""}`,
    );
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
