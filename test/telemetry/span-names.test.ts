import { describe, expect, it } from "vitest";
import { SpanNames } from "../../src/telemetry/span-names.js";

describe("span names", () => {
  it("name each subject `<operation> <subject>`, past the number of names kept as well", () => {
    const names = new SpanNames("execute_tool");
    expect(names.of("read_file")).toBe("execute_tool read_file");
    expect(names.of("read_file")).toBe("execute_tool read_file");
    // A model may call tools by any name: every one is still named right once none are kept.
    for (let index = 0; index < 1_000; index += 1)
      expect(names.of(`tool_${index}`)).toBe(`execute_tool tool_${index}`);
    expect(names.of("mcp__fs__read")).toBe("execute_tool mcp__fs__read");
  });
});
