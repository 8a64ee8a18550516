import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { recordingReceiver } from "../support/recording-receiver.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

interface Delivery {
  run: string;
  status: string;
}

describe("a daemon killed between a run's end and its deliveries", () => {
  it("decides them at its next start, once", { timeout: 120_000 }, async () => {
    const chat = await recordingReceiver(kit);
    const { project } = await kit.scriptedProject(textReply("the digest"));
    project.writeAgent("digest", { deliver: [{ to: "slack", url: `${chat.url}/services/x` }] });
    project.writeAgent("quiet", { deliver: [{ to: "slack", url: `${chat.url}/quiet`, when: ["failure"] }] });
    const first = await kit.daemon(project.configFile);
    const run = await startRun(first, "digest", "write the digest");
    await waitForRunEnd(first, run);
    const quiet = await startRun(first, "quiet", "all is well");
    await waitForRunEnd(first, quiet);
    await waitFor(() => chat.received.length === 1, "the delivery");
    await first.kill();
    // What a kill -9 in the moment after the runs' ends were written leaves: the runs ended, no
    // delivery stored, both still owed their deliveries in the journal.
    const kept = path.join(project.dataDirectory, "deliveries.json");
    writeFileSync(kept, `${JSON.stringify({ deliveries: [] })}\n`);
    const journal = path.join(project.dataDirectory, "follow-ups", "deliveries.jsonl");
    appendFileSync(journal, `${JSON.stringify({ owed: run })}\n${JSON.stringify({ owed: quiet })}\n`);
    const second = await kit.daemon(project.configFile);
    const deliveries = async () =>
      ((await second.request("GET", "/deliveries")).body as { deliveries: Delivery[] }).deliveries;
    await waitFor(async () => (await deliveries())[0]?.status === "sent", "the delivery made at the start");
    expect(chat.received.map((request) => request.path)).toEqual(["/services/x", "/services/x"]);
    // The quiet run's decision (no failure) makes none again.
    expect((await deliveries()).map((delivery) => delivery.run)).toEqual([run]);
    expect(second.stderr()).toContain("decided the deliveries of runs that ended just before a crash");
    // Stored as sent now: the next start makes it no more.
    await waitFor(() => readFileSync(kept, "utf8").includes('"status":"sent"'), "the sent delivery stored");
    await second.kill();
    // The journal is read before the API serves: a started daemon has decided what it owed.
    const third = await kit.daemon(project.configFile);
    expect(
      ((await third.request("GET", "/deliveries")).body as { deliveries: Delivery[] }).deliveries,
    ).toHaveLength(1);
    expect(third.stderr()).not.toContain("decided the deliveries of runs that ended just before");
    expect(chat.received).toHaveLength(2);
  });
});
