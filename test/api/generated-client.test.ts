import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";
import openapiTS, { astToString } from "openapi-typescript";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { clientDriverSource } from "../support/openapi-client-driver.js";
import { declaredStatuses, labelOf, operationsOf } from "../support/openapi-operations.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { textReply } from "../support/scripted-llm-server.js";
import { transpiled, typeErrors } from "../support/type-check.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

const scripted = useScriptedDaemon({
  reply: textReply("done"),
  agents: (project) => project.writeAgent("writer", { memory: "write" }),
});

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A folder like a user's project: its own package.json, and the packages this repository has. */
function clientProject(): string {
  const folder = mkdtempSync(path.join(tmpdir(), "agentd-client-"));
  folders.push(folder);
  symlinkSync(path.join(ROOT, "node_modules"), path.join(folder, "node_modules"));
  writeFileSync(path.join(folder, "package.json"), JSON.stringify({ type: "module", private: true }));
  return folder;
}

const AnswersSchema = z.array(z.object({ operation: z.string(), status: z.number().int() }));

describe("a client generated from /openapi.json", { timeout: 60_000 }, () => {
  it("type-checks as a user writes it and drives every route to a status the document declares", async () => {
    const { daemon } = scripted;
    const run = await startRun(daemon, "writer", "say done");
    await waitForRunEnd(daemon, run);
    const document: unknown = await (await fetch(`${daemon.url}/openapi.json`)).json();

    // What a user does: openapi-typescript on the daemon's document, openapi-fetch on the types.
    const folder = clientProject();
    writeFileSync(path.join(folder, "api.d.ts"), astToString(await openapiTS(document as never)));
    const operations = operationsOf(document);
    const source = clientDriverSource(operations, {
      id: "writer",
      agent: "writer",
      run,
      name: "client-test",
      scope: "team",
      task: "say done",
      token: daemon.token ?? "",
    });
    const driver = path.join(folder, "driver.ts");
    writeFileSync(driver, source);
    expect(typeErrors([driver]), source).toEqual([]);

    writeFileSync(path.join(folder, "driver.js"), transpiled(source));
    const runner = path.join(folder, "run.mjs");
    writeFileSync(
      runner,
      `import { drive } from "./driver.js";\n` +
        `console.log(JSON.stringify(await drive(process.argv[2], process.argv[3])));\n`,
    );
    const driven = await execa(process.execPath, [runner, daemon.url, daemon.token ?? ""], { cwd: folder });
    const answers = AnswersSchema.parse(JSON.parse(driven.stdout));

    const undeclared = operations.flatMap((operation) => {
      const label = labelOf(operation);
      const statuses = answers.filter((answer) => answer.operation === label).map((answer) => answer.status);
      if (statuses.length === 0) return [`${label}: never called`];
      const declared = declaredStatuses(operation);
      return statuses
        .filter((status) => !declared.includes(status))
        .map((status) => `${label} answered ${status}, declares ${declared.join(" ")}`);
    });
    expect(undeclared, JSON.stringify(answers)).toEqual([]);
    // The driver reached the routes, not just their error answers: reads succeed.
    const failedReads = answers.filter(
      (answer) => answer.operation.startsWith("GET ") && (answer.status < 200 || answer.status >= 400),
    );
    expect(failedReads).toEqual([]);
    expect(operations.length).toBeGreaterThanOrEqual(30);
  });
});
