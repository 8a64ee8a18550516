import { mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { listRuns } from "../daemon/api-shapes.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { textReply } from "../support/scripted-llm-server.js";
import { waitFor } from "../support/wait-for.js";

const scripted = useScriptedDaemon({
  reply: textReply("imported"),
  agents: (project) => {
    mkdirSync(path.join(project.root, "work", "inbox"), { recursive: true });
    project.writeAgent("importer", {
      workdir: "./work",
      triggers: [{ watch: { path: "inbox", glob: "*.csv", debounce: "300ms" }, task: "Import {{paths}}" }],
    });
  },
});

/** A file put into the folder the way `tar x`, `rsync -a` or `cp -p` put one: its modification time kept. */
function dropWithKeptTime(file: string): void {
  writeFileSync(file, "id,amount\n1,100\n");
  const kept = new Date("2026-11-30T08:00:00Z");
  utimesSync(file, kept, kept);
}

describe("a watch trigger given the same file again", () => {
  it(
    "starts a run each time, though its name, size and modification time are the same",
    { timeout: 90_000 },
    async () => {
      expect(scripted.daemon.stderr()).toContain("watch trigger ready");
      const file = path.join(scripted.project.root, "work", "inbox", "batch.csv");
      const importerRuns = () => listRuns(scripted.daemon, "?agent=importer");
      dropWithKeptTime(file);
      await waitFor(async () => (await importerRuns()).length === 1, "the first run");
      // Processed and taken away, then put back to be processed again.
      rmSync(file);
      dropWithKeptTime(file);
      const runs = await waitFor(async () => {
        const found = await importerRuns();
        return found.length === 2 && found;
      }, "the second run");
      expect(runs.map((run) => run.task)).toEqual(["Import batch.csv", "Import batch.csv"]);
    },
  );
});
