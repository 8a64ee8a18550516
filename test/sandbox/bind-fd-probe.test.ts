import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sandboxAvailability } from "../../src/sandbox/bubblewrap.js";

const folders: string[] = [];

/** A `bwrap` (a real executable) that answers the --ro-bind-fd probe with `onBindFd`, anything else with success. */
function fakeBubblewrap(onBindFd: string): string {
  const folder = mkdtempSync(path.join(tmpdir(), "agentd-fake-bwrap-"));
  folders.push(folder);
  const marker = path.join(folder, "probed-once");
  writeFileSync(
    path.join(folder, "bwrap"),
    [
      "#!/bin/sh",
      `MARKER='${marker}'`,
      'case " $* " in *" --ro-bind-fd "*)',
      onBindFd,
      "esac",
      "exit 0",
      "",
    ].join("\n"),
  );
  chmodSync(path.join(folder, "bwrap"), 0o755);
  return folder;
}

afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe("the probe for bubblewrap's --bind-fd", () => {
  it("does not give up binding by descriptor when its first start is cut short", () => {
    // The first probe start dies as a timeout would leave it; the second answers.
    const folder = fakeBubblewrap('[ -e "$MARKER" ] || { : > "$MARKER"; kill -9 $$; }');
    const availability = sandboxAvailability(folder);
    expect(availability).toMatchObject({ available: true, bindsByDescriptor: true });
  });

  it("binds by path only when bubblewrap itself refuses the option", () => {
    const folder = fakeBubblewrap('echo "bwrap: Unknown option --ro-bind-fd" >&2; exit 1');
    const availability = sandboxAvailability(folder);
    expect(availability).toMatchObject({ available: true, bindsByDescriptor: false });
    expect(availability.available && availability.description).toContain("without --bind-fd");
  });
});
