import { describe, expect, it } from "vitest";
import { parseAgentFile } from "../../src/definitions/parse-agent-file.js";

function parse(text: string, file = "/project/agents/notes.md") {
  return parseAgentFile(file, { bytes: Buffer.from(text), text });
}

describe("parseAgentFile", () => {
  it("reads Windows line endings and keeps the body as the instructions", () => {
    const parsed = parse("---\r\ndescription: Notes\r\nworker: llm\r\n---\r\nLine one.\r\nLine two.\r\n");
    expect(parsed.errors).toEqual([]);
    expect(parsed.frontmatter?.description).toBe("Notes");
    expect(parsed.instructions).toBe("Line one.\nLine two.\n");
  });

  it("reports lines of the .md file with Windows line endings", () => {
    const parsed = parse("---\r\ndescription: Notes\r\ntemperature: warm\r\n---\r\nBody\r\n");
    expect(parsed.errors[0]?.toJSON()).toMatchObject({ field: "temperature", line: 3 });
  });

  it("accepts an explicit ---yaml opening and rejects another frontmatter language", () => {
    expect(parse("---yaml\ndescription: Notes\n---\nBody\n").errors).toEqual([]);
    expect(parse('---json\n{"description": "Notes"}\n---\nBody\n').errors[0]?.message).toBe(
      'frontmatter in "json" is not supported',
    );
  });

  it("reports an empty frontmatter as a missing description on line 1's block", () => {
    const parsed = parse("---\n---\nBody\n");
    expect(parsed.errors.map((error) => [error.field, error.message])).toEqual([
      ["description", "description is required: one line saying what the agent does"],
    ]);
  });

  it("reports a frontmatter that is never closed", () => {
    expect(parse("---\ndescription: Notes\nBody without the closing line\n").errors[0]?.message).toBe(
      "the frontmatter is not closed",
    );
  });

  it("parses YAML 1.2: `on`, `yes` and `no` stay strings, and duplicate keys are errors", () => {
    const parsed = parse("---\ndescription: no\nname: yes\n---\nBody\n");
    expect(parsed.frontmatter?.description).toBe("no");
    expect(parsed.frontmatter?.name).toBe("yes");
    const duplicated = parse("---\ndescription: one\ndescription: two\n---\nBody\n");
    expect(duplicated.errors[0]?.toJSON()).toMatchObject({ code: "DEFINITION_INVALID", line: 3 });
  });

  it("warns when there are no instructions, and when a schedule has no task", () => {
    const parsed = parse('---\ndescription: Notes\nschedule: "0 9 * * *"\n---\n');
    expect(parsed.errors).toEqual([]);
    expect(parsed.warnings).toEqual([
      "/project/agents/notes.md: the file has no instructions after the frontmatter",
      "/project/agents/notes.md:3 schedule: scheduled runs have no task — add task: or schedule.task",
    ]);
  });
});
