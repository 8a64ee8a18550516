import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { ScheduleState } from "../../src/scheduler/schedule-state.js";

let folder: string | undefined;
afterEach(() => {
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

describe("ScheduleState", () => {
  it("moves a folder in schedules.json's place aside, says so, and writes the state in its place", () => {
    folder = mkdtempSync(path.join(os.tmpdir(), "agentd-schedule-state-"));
    const file = path.join(folder, "schedules.json");
    mkdirSync(file);
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(line) });

    const state = ScheduleState.load(file, logger);

    expect(state.get("anyone")).toBeUndefined();
    const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual([
      expect.stringMatching(
        /^moved \S+ aside \(cannot be read \(EISDIR\)\): missed fires cannot be detected this time.*; look at \S+\.damaged-\S+, then delete it$/,
      ),
    ]);
    state.set("ticker", { checked_at: "2026-01-01T00:00:00.000Z" });
    state.flush();
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      agents: { ticker: { checked_at: "2026-01-01T00:00:00.000Z" } },
    });
    expect(readdirSync(folder).filter((name) => name.includes(".damaged-"))).toHaveLength(1);
  });

  it("moves aside a folder put in schedules.json's place while it runs, instead of throwing at the next fire", () => {
    folder = mkdtempSync(path.join(os.tmpdir(), "agentd-schedule-state-"));
    const file = path.join(folder, "schedules.json");
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(line) });
    const state = ScheduleState.load(file, logger);
    state.set("ticker", { checked_at: "2026-01-01T00:00:00.000Z" });
    state.flush();

    // A fire's flush runs in a timer's callback: a throw there ended the daemon.
    rmSync(file);
    mkdirSync(file);
    state.set("ticker", { checked_at: "2026-01-01T00:01:00.000Z" });
    expect(() => state.flush()).not.toThrow();

    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      agents: { ticker: { checked_at: "2026-01-01T00:01:00.000Z" } },
    });
    expect(readdirSync(folder).filter((name) => name.includes(".damaged-"))).toHaveLength(1);
    const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual([expect.stringMatching(/^moved \S+ aside \(cannot be written \(EISDIR\)\)/)]);
  });

  it("names what it moves aside by the daemon's clock, not the machine's", () => {
    folder = mkdtempSync(path.join(os.tmpdir(), "agentd-schedule-state-"));
    const file = path.join(folder, "schedules.json");
    mkdirSync(file);
    const logger = pino({ level: "silent" });
    let time = "2031-05-06T07:08:09.010Z";
    const now = () => new Date(time);

    // At the start, and again while it runs.
    const state = ScheduleState.load(file, logger, { now });
    time = "2031-05-06T08:00:00.000Z";
    state.set("ticker", { checked_at: time });
    mkdirSync(file);
    state.flush();

    expect(
      readdirSync(folder)
        .filter((name) => name.includes(".damaged-"))
        .sort(),
    ).toEqual([
      "schedules.json.damaged-2031-05-06T07-08-09.010Z",
      "schedules.json.damaged-2031-05-06T08-00-00.000Z",
    ]);
  });
});
