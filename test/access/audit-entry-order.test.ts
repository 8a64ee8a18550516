import { describe, expect, it } from "vitest";
import { AUDIT_CURSOR, AuditEntryMaker } from "../../src/access/audit-entry.js";

const draft = { action: "token.create" as const, actor: { kind: "cli" as const, name: "default" } };

describe("audit entry ids", () => {
  it("sort in the order a log made its entries, in one millisecond and after the clock went back", () => {
    const entries = new AuditEntryMaker();
    const noon = new Date("2026-12-01T12:00:00.000Z");
    const made = [
      ...Array.from({ length: 200 }, () => entries.make(draft, noon, undefined)),
      // The clock set back a minute: the entries still come after the ones made before.
      entries.make(draft, new Date("2026-12-01T11:59:00.000Z"), undefined),
      entries.make(draft, new Date("2026-12-01T12:00:00.005Z"), undefined),
    ];
    const ids = made.map((entry) => entry.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const entry of made) {
      expect(entry.id).toMatch(AUDIT_CURSOR);
      // An id is the one its time makes (a reader checks: see files-audit-log.ts).
      expect(Number.parseInt(entry.id.slice(0, 12), 36)).toBe(Date.parse(entry.time));
    }
    expect(made.at(-2)?.time).toBe("2026-12-01T12:00:00.000Z");
    expect(made.at(-1)?.time).toBe("2026-12-01T12:00:00.005Z");
  });
});
