import { describe, expect, it } from "vitest";
import { StoredEventSchema, parseStoredEvent } from "../../src/events/stored-event-schema.js";

/** What each envelope field may be given, right or wrong. */
const FIELD_VALUES: Record<string, unknown[]> = {
  id: [1, 42, 0, -1, 1.5, 2 ** 53, 2 ** 53 - 1, "1", null, true, [], {}],
  agent: ["a", "agent-0", "", 1, null, ["a"], {}],
  run: ["r_1", "", null, 1, false, {}],
  type: ["status", "", 0, null, []],
  time: ["2026-01-01T00:00:00.000Z", "", 0, null],
  data: [{ status: "running" }, null, "text", 0, [], { nested: { deep: [1, 2] } }],
};
const MISSING = Symbol("missing");

function* candidates(): Generator<unknown> {
  const base: Record<string, unknown> = {
    id: 7,
    agent: "agent-0",
    run: "r_1",
    type: "status",
    time: "2026-01-01T00:00:00.000Z",
    data: { status: "running" },
  };
  yield base;
  for (const [field, values] of Object.entries(FIELD_VALUES)) {
    for (const value of [...values, MISSING]) {
      const event = { ...base };
      if (value === MISSING) delete event[field];
      else event[field] = value;
      yield event;
      yield { ...event, extra: 1 };
    }
  }
  for (const other of [null, 1, "text", [], [base], true]) yield other;
}

describe("parseStoredEvent", () => {
  it("gives exactly what StoredEventSchema gives for every value a line can hold", () => {
    let checked = 0;
    for (const value of candidates()) {
      const line = JSON.stringify(value);
      const expected = StoredEventSchema.safeParse(value);
      expect(parseStoredEvent(line), line).toStrictEqual(expected.success ? expected.data : undefined);
      checked += 1;
    }
    expect(checked).toBeGreaterThan(80);
  });

  it("reads nothing from a line that is not JSON", () => {
    for (const line of ['{"id":1,"agent":"a"', "", "{}{}", "\0\0\0", '{"id":1}x']) {
      expect(parseStoredEvent(line)).toBeUndefined();
    }
  });
});
