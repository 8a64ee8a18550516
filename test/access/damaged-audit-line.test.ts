import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useScriptedDaemon } from "../support/scripted-daemon.js";

const scripted = useScriptedDaemon({ agents: () => undefined });

interface Page {
  entries: Array<{ id: string; action: string; target?: string }>;
  next: string;
}

/** Polls GET /audit a page of one at a time from `after`, as an auditor's collector follows it. */
async function follow(after: string | undefined): Promise<{ targets: string[]; next: string | undefined }> {
  const targets: string[] = [];
  let cursor = after;
  for (let page = 0; page < 20; page++) {
    const query = cursor === undefined ? "?limit=1" : `?limit=1&after=${cursor}`;
    const reply = await scripted.daemon.request("GET", `/audit${query}`);
    expect(reply.status).toBe(200);
    const body = reply.body as Page;
    if (body.entries.length === 0) break;
    targets.push(...body.entries.map((entry) => entry.target ?? entry.action));
    cursor = body.next;
  }
  return { targets, next: cursor };
}

describe("a damaged line in the audit log", () => {
  it("hides no entry from a reader that follows the trail page by page", { timeout: 60_000 }, async () => {
    const create = async (name: string) =>
      expect((await scripted.daemon.request("POST", "/tokens", { name, role: "read" })).status).toBe(201);
    await create("first");
    // A bit flipped in a copy of the first entry's id: still JSON, still an id's shape, years ahead.
    const folder = path.join(scripted.project.dataDirectory, "audit");
    const [day] = readdirSync(folder);
    const file = path.join(folder, day ?? "");
    const [line] = readFileSync(file, "utf8").split("\n");
    const entry = JSON.parse(line ?? "{}") as { id: string };
    appendFileSync(file, `${JSON.stringify({ ...entry, id: `z${entry.id.slice(1)}`, target: "damaged" })}\n`);
    await create("second");
    const before = await follow(undefined);
    expect(before.targets).toEqual(["first", "second"]);
    await create("third");
    expect((await follow(before.next)).targets).toEqual(["third"]);
  });

  it("and a cursor past any date are no error: nothing comes after it", async () => {
    const after = "zzzzzzzzzzzz-000000000000";
    const reply = await scripted.daemon.request("GET", `/audit?after=${after}`);
    expect(reply).toMatchObject({ status: 200, body: { entries: [], next: after } });
  });
});
