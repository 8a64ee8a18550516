import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolHarness } from "../support/tool-harness.js";

let harness: ToolHarness;

/** A workdir with a `private` folder (nested too) next to public files, all holding "API". */
function setUpTree(permissions: { allow?: string[]; ask?: string[]; deny?: string[] }): void {
  harness = new ToolHarness({ permissions });
  const { workdir } = harness;
  mkdirSync(path.join(workdir, "private", "deeper"), { recursive: true });
  writeFileSync(path.join(workdir, "private", "creds.txt"), "API_KEY=hunter2\n");
  writeFileSync(path.join(workdir, "private", "deeper", "more.txt"), "API_TOKEN=xyz\n");
  mkdirSync(path.join(workdir, "docs"));
  writeFileSync(path.join(workdir, "docs", "api.md"), "API usage\n");
  writeFileSync(path.join(workdir, "notes.env"), "API_NOTE=1\n");
}

describe("file tools: folder walks honour path-scoped deny and ask rules", () => {
  afterEach(() => harness.dispose());

  for (const rules of [["private/*"], ["private"], ["private", "private/*"]]) {
    it(`search_files "." leaves out a folder denied as ${rules.join(" and ")}`, async () => {
      setUpTree({ allow: ["search_files"], deny: rules.map((rule) => `search_files(${rule})`) });
      const result = await harness.call("search_files", { pattern: "API", path: "." });
      expect(result.output.split("\n").sort()).toEqual([
        "docs/api.md:1: API usage",
        "notes.env:1: API_NOTE=1",
      ]);
      const unscoped = await harness.call("search_files", { pattern: "hunter2" });
      expect(unscoped.output).toBe('no match for "hunter2"');
    });

    it(`list_dir recursive does not name what is in a folder denied as ${rules.join(" and ")}`, async () => {
      setUpTree({ allow: ["list_dir"], deny: rules.map((rule) => `list_dir(${rule})`) });
      const result = await harness.call("list_dir", { recursive: true });
      expect(result.output.split("\n").sort()).toEqual(["docs/", "docs/api.md", "notes.env"]);
    });
  }

  it("leaves out single files a rule names, and what an ask rule names (no approval asked)", async () => {
    setUpTree({
      allow: ["search_files", "list_dir"],
      deny: ["search_files(*.env)"],
      ask: ["list_dir(docs/*)"],
    });
    const search = await harness.call("search_files", { pattern: "API" });
    expect(search.output).not.toContain("notes.env");
    expect(search.output).toContain("docs/api.md:1: API usage");
    const listing = await harness.call("list_dir", { recursive: true });
    expect(listing.output.split("\n")).not.toContain("docs/api.md");
    expect(listing.output.split("\n")).toContain("notes.env");
    expect(harness.approvalRequests).toEqual([]);
  });

  it("still refuses a call that starts inside the denied folder", async () => {
    setUpTree({ allow: ["search_files"], deny: ["search_files(private/*)", "search_files(private)"] });
    for (const start of ["private", "private/creds.txt", "./private/deeper"]) {
      const result = await harness.call("search_files", { pattern: "API", path: start });
      expect({ start, code: result.code }).toEqual({ start, code: "TOOL_DENIED" });
    }
  });
});
