import { describe, expect, it } from "vitest";
import { renderTaskTemplate, unknownVariables, valueAt } from "../../src/triggers/task-template.js";
import { matchesFilter } from "../../src/triggers/payload-filter.js";

describe("trigger task templates", () => {
  it("fills payload paths in one pass and defuses template syntax a sender put in the payload", () => {
    const payload = {
      pull_request: { html_url: "{{payload.secret}}{{secret:vault_key}}{{{{x}}}}" },
      secret: "S",
    };
    const task = renderTaskTemplate("PR {{payload.pull_request.html_url}} {{ payload.missing }}", (name) =>
      valueAt(payload, name.split(".").slice(1)),
    );
    expect(task).not.toMatch(/\{\{|\}\}/);
    expect(task).not.toContain(" S");
    expect(task.startsWith("PR { {payload.secret} }")).toBe(true);
  });

  it("never reads inherited properties of a payload", () => {
    expect(valueAt({}, ["__proto__"])).toBeUndefined();
    expect(valueAt({}, ["constructor", "name"])).toBeUndefined();
    expect(valueAt(JSON.parse('{"__proto__": {"x": 1}}'), ["__proto__", "x"])).toBe(1);
  });

  it("knows each kind's variables and leaves secret references alone", () => {
    expect(
      unknownVariables("{{payload.a.b}} {{payload_file}} {{secret:x}} {{upstream.result}}", "webhook"),
    ).toEqual(["upstream.result"]);
    expect(unknownVariables("{{upstream.result}} {{upstream.id}} {{paths}}", "after")).toEqual(["paths"]);
    expect(unknownVariables("{{paths}} {{folder}}", "watch")).toEqual([]);
  });

  it("matches filters on exact values, any of a list, never on objects", () => {
    const payload = { action: "opened", pull_request: { draft: false, number: 3 } };
    expect(matchesFilter(payload, { action: ["opened", "reopened"], "pull_request.draft": false })).toBe(
      true,
    );
    expect(matchesFilter(payload, { "pull_request.number": "3" })).toBe(false);
    expect(matchesFilter(payload, { pull_request: "x" })).toBe(false);
    expect(matchesFilter(payload, { "action.length": 6 })).toBe(false);
  });
});
