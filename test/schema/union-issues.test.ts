import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { describeIssues } from "../../src/schema/schema-issues.js";

/** The problems a config with `sandbox:` as given is reported with: field and message. */
function sandboxProblems(sandbox: unknown): { field: string; message: string }[] {
  const result = ConfigSchema.safeParse({ sandbox });
  if (result.success) return [];
  return describeIssues(ConfigSchema, result.error.issues).map(({ field, message }) => ({ field, message }));
}

describe("a value that fits none of a union's options", () => {
  it("names the key and the values it allows instead of zod's 'Invalid input'", () => {
    expect(sandboxProblems("offf")).toEqual([
      { field: "sandbox", message: 'must be "off" or a mapping (key: value lines)' },
    ]);
    expect(sandboxProblems({ network: "some" })).toEqual([
      { field: "sandbox.network", message: 'must be "none", "all" or a list' },
    ]);
  });

  it("reports the problem inside the option the value has the shape of, at its own key", () => {
    expect(sandboxProblems({ mode: "bad" })).toEqual([
      {
        field: "sandbox.mode",
        message: expect.stringContaining('"workspace-write"|"read-only"|"off"') as unknown,
      },
    ]);
    expect(sandboxProblems({ network: [5] })).toEqual([
      { field: "sandbox.network[0]", message: expect.stringContaining("expected string") as unknown },
    ]);
  });

  it("never leaves a bare 'Invalid input' for a sandbox value", () => {
    for (const sandbox of ["offf", 5, true, [], { mode: 1 }, { network: {} }, { read: "x" }]) {
      const problems = sandboxProblems(sandbox);
      expect(problems.length).toBeGreaterThan(0);
      for (const problem of problems) expect(problem.message).not.toBe("Invalid input");
    }
  });
});
