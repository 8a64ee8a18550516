import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
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
  it("says a folder in schedules.json's place cannot be read and to move it aside, not that it is not JSON", () => {
    folder = mkdtempSync(path.join(os.tmpdir(), "agentd-schedule-state-"));
    const file = path.join(folder, "schedules.json");
    mkdirSync(file);
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(line) });

    const state = ScheduleState.load(file, logger);

    expect(state.get("anyone")).toBeUndefined();
    const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual([
      expect.stringMatching(/cannot be read \(EISDIR\): move aside what is in its place/),
    ]);
  });
});
