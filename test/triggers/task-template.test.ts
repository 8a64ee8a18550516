import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import {
  MAX_INSERTED_CHARACTERS,
  renderTaskTemplate,
  unknownVariables,
  valueAt,
} from "../../src/triggers/task-template.js";
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

  it("shows none of a secret a payload value's cut falls inside, once the task is masked", () => {
    const secret = "sk-live-7f3a9c1e5b2d8f4a6c0e9b7d";
    const redactor = new SecretRedactor();
    redactor.add("api_key", secret);
    // The value's first characters up to the bound are kept: the secret's first 12 would be.
    const body = `${"x".repeat(MAX_INSERTED_CHARACTERS - 12)}${secret} and more`;
    const task = renderTaskTemplate("Look: {{payload.body}}", () => body, redactor.redactText);

    // The run masks its task as a whole; the cut piece must be masked already.
    const shown = redactor.redact(task);
    expect(shown).toContain("[secret:");
    expect(shown).not.toContain(secret.slice(0, 8));
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
