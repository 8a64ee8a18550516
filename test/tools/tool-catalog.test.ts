import { describe, expect, it } from "vitest";
import { builtinTools } from "../../src/tools/builtin/builtin-tools.js";
import { CompositeToolCatalog, type ToolSource } from "../../src/tools/tool-catalog.js";

/** A source that owns every name and never answers: a built-in must not wait on it. */
const hangingSource: ToolSource = {
  owns: () => true,
  find: () => new Promise(() => undefined),
  expand: () => new Promise(() => undefined),
};

describe("the tool catalog's built-ins", () => {
  it("gives a built-in at once, without asking a source", () => {
    const catalog = new CompositeToolCatalog(builtinTools(), [hangingSource]);
    expect(catalog.builtin("read_file")?.name).toBe("read_file");
  });

  it("gives nothing at once for a name only a source offers", () => {
    const catalog = new CompositeToolCatalog(builtinTools(), [hangingSource]);
    expect(catalog.builtin("mcp:srv/create_issue")).toBeUndefined();
  });
});
