import { describe, expect, it } from "vitest";
import { visitStrings } from "../../src/secrets/secret-template.js";

const maskHunter = (text: string) => text.replaceAll("hunter2", "[secret:password]");

describe("visitStrings", () => {
  it("maps every string, deeply, keeping the shape and the order of the fields", () => {
    const value = { a: "x", b: ["hunter2", 1, { c: "say hunter2" }], d: null, e: true };
    const mapped = visitStrings(value, maskHunter);
    expect(mapped).toEqual({
      a: "x",
      b: ["[secret:password]", 1, { c: "say [secret:password]" }],
      d: null,
      e: true,
    });
    expect(Object.keys(mapped)).toEqual(["a", "b", "d", "e"]);
    expect(value.b[0]).toBe("hunter2");
  });

  it("gives back an array or plain object in which nothing changed as it is", () => {
    const untouched = { tool: "read_file", output: ["line 1", "line 2"], meta: { ok: true } };
    const value = { untouched, changed: { text: "hunter2" } };
    const mapped = visitStrings(value, maskHunter);
    expect(mapped).not.toBe(value);
    expect(mapped.untouched).toBe(untouched);
    expect(mapped.changed).toEqual({ text: "[secret:password]" });
    expect(visitStrings(untouched, maskHunter)).toBe(untouched);
  });

  it("copies any other object to a plain one of its enumerable fields, as before", () => {
    const mapped = visitStrings({ at: new Date(0) }, maskHunter);
    expect(mapped.at).toEqual({});
    expect(mapped.at).not.toBeInstanceOf(Date);
  });
});
