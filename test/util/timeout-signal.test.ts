import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/** The built module (`npm run build` first, as `npm test` does): the check needs a child with --expose-gc. */
const ABORT_ENDING = path.resolve(import.meta.dirname, "../../dist/run-vocabulary/abort-ending.js");

// A call's deadline merged with its run's signal, referenced by nothing but the listener on the
// merged signal, while collections run: on Node 20 an AbortSignal.timeout there never fired.
const SCRIPT = `
const { withDeadline } = await import(process.argv[1]);
let fired = false;
withDeadline(new AbortController().signal, 200).addEventListener("abort", () => { fired = true; });
const until = Date.now() + 800;
while (Date.now() < until && !fired) { globalThis.gc(); await new Promise((resolve) => setTimeout(resolve, 20)); }
process.stdout.write(fired ? "fired" : "never fired");
`;

describe("a call's deadline", () => {
  it("fires after garbage collections, merged with the run's signal", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--expose-gc", "--input-type=module", "-e", SCRIPT, ABORT_ENDING],
      { timeout: 15_000 },
    );
    expect(stdout).toBe("fired");
  });
});
