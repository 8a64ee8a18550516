import { expect, it } from "vitest";
import { rootProcessLimitDescription } from "../../src/sandbox/root-limits-warning.js";

it("warns that the process limit does not hold when the daemon runs as root with the sandbox on", () => {
  expect(rootProcessLimitDescription(0, "workspace-write")).toMatch(
    /running as root: sandbox\.limits\.processes does not bound/,
  );
  expect(rootProcessLimitDescription(0, "read-only")).toBeDefined();
  expect(rootProcessLimitDescription(1000, "workspace-write")).toBeUndefined();
  expect(rootProcessLimitDescription(0, "off")).toBeUndefined();
  expect(rootProcessLimitDescription(undefined, "workspace-write")).toBeUndefined();
});
