import { beforeAll, describe, expect, it } from "vitest";
import { parseAgentFile } from "../../src/definitions/parse-agent-file.js";
import { checkPermission } from "../../src/permissions/permission-check.js";
import { loadBashParser } from "../../src/permissions/shell-parser.js";

beforeAll(async () => {
  await loadBashParser();
});

/** Parses an opencode agent file as it sits in a project's `.opencode/agent/`. */
function parse(frontmatter: string, name = "reviewer.md") {
  const text = `---\n${frontmatter}\n---\nYou review code and report what you find.\n`;
  const parsed = parseAgentFile(`/project/.opencode/agent/${name}`, { bytes: Buffer.from(text), text });
  expect(parsed.errors.map((error) => error.describe())).toEqual([]);
  expect(parsed.dialect).toBe("opencode");
  const frontmatterOut = parsed.frontmatter;
  if (frontmatterOut === undefined) throw new Error("no frontmatter");
  const permissions = frontmatterOut.permissions ?? { allow: [], ask: [], deny: [] };
  return {
    parsed,
    tools: frontmatterOut.tools,
    notes: parsed.warnings.join("\n"),
    /** What agentd decides for a shell command. */
    shell: (command: string) => checkPermission(permissions, "shell", { kind: "shell", command }).decision,
    /** What agentd decides for a call of a tool on one path or URL. */
    call: (tool: string, text: string) =>
      checkPermission(permissions, tool, { kind: "texts", texts: [text] }).decision,
  };
}

describe("opencode permission semantics", () => {
  it("allows every tool without asking when the file has no permission section, as opencode does", () => {
    const agent = parse("description: Reviews code\nmode: subagent");
    expect(agent.tools).toEqual([
      "read_file",
      "write_file",
      "list_dir",
      "search_files",
      "shell",
      "http_request",
    ]);
    expect(agent.shell("npm test")).toBe("allow");
    expect(agent.call("write_file", "src/index.ts")).toBe("allow");
    expect(agent.call("http_request", "https://example.com/")).toBe("allow");
    expect(agent.call("read_file", "README.md")).toBe("allow");
    // opencode's own default: .env files are not read.
    expect(agent.call("read_file", "/project/.env")).toBe("deny");
    expect(agent.call("read_file", "config/.env.production")).toBe("deny");
    expect(agent.notes).toMatch(/permission: left out: every tool runs without asking, as in opencode/);
  });

  it('honours a global "*": deny with tools opened one by one', () => {
    const agent = parse(
      [
        "description: Reads and greps, nothing else",
        "permission:",
        '  "*": deny',
        "  read: allow",
        "  grep: allow",
        "  glob: allow",
      ].join("\n"),
    );
    expect(agent.tools).toEqual(["read_file", "search_files"]);
    expect(agent.call("read_file", "src/a.ts")).toBe("allow");
    expect(agent.call("search_files", "src")).toBe("allow");
    expect(agent.shell("ls")).toBe("deny");
    expect(agent.call("write_file", "src/a.ts")).toBe("deny");
    expect(agent.call("http_request", "https://example.com/")).toBe("deny");
    expect(agent.notes).toMatch(/denied, so not offered: write_file, list_dir, shell, http_request/);
  });

  it('honours "*": deny inside one tool, and "*" first then specific rules (last match wins)', () => {
    const agent = parse(
      [
        "description: Runs git and the tests",
        "permission:",
        "  edit: deny",
        "  webfetch:",
        '    "*": deny',
        "  bash:",
        '    "*": ask',
        '    "git *": allow',
        '    "npm test": allow',
        '    "git push *": deny',
      ].join("\n"),
    );
    expect(agent.tools).toEqual(["read_file", "list_dir", "search_files", "shell"]);
    expect(agent.shell("git status")).toBe("allow");
    expect(agent.shell("npm test")).toBe("allow");
    expect(agent.shell("git push origin main")).toBe("deny");
    expect(agent.shell("curl https://example.com")).toBe("ask");
    expect(agent.call("write_file", "a.txt")).toBe("deny");
    expect(agent.call("http_request", "https://example.com/")).toBe("deny");
    expect(agent.call("read_file", "a.txt")).toBe("allow");
  });

  it('never allows more than opencode when "*" comes last, and keeps a stricter rule written before it', () => {
    const agent = parse(
      [
        "description: Written for the old precedence",
        "permission:",
        "  bash:",
        '    "git status": allow',
        '    "*": ask',
        "  edit:",
        '    "**/dist/**": deny',
        '    "*": allow',
      ].join("\n"),
    );
    // opencode: the trailing "*": ask wins over "git status": allow.
    expect(agent.shell("git status")).toBe("ask");
    expect(agent.notes).toMatch(/"git status": allow is overridden by the later "\*": ask/);
    // opencode would let the later "*": allow win; the author's deny is kept, and the note says so.
    expect(agent.call("write_file", "app/dist/main.js")).toBe("deny");
    expect(agent.call("write_file", "app/src/main.ts")).toBe("allow");
    expect(agent.notes).toMatch(/"\*\*\/dist\/\*\*": deny comes before "\*": allow/);
  });

  it('turns a "*": deny beside specific allows into ask, and says so', () => {
    const agent = parse(
      ["description: Only git", "permission:", "  bash:", '    "*": deny', '    "git *": allow'].join("\n"),
    );
    expect(agent.shell("git log")).toBe("allow");
    expect(agent.shell("rm -rf /")).toBe("ask");
    expect(agent.notes).toMatch(/shell: the "\*": deny beside "git \*" becomes ask/);
  });

  it("reads permission: ask for every tool, with one opened", () => {
    const agent = parse(["description: Asks first", "permission:", '  "*": ask', "  read: allow"].join("\n"));
    expect(agent.call("read_file", "a.txt")).toBe("allow");
    expect(agent.call("write_file", "a.txt")).toBe("ask");
    expect(agent.shell("ls")).toBe("ask");
    const all = parse("description: Asks for all\npermission: deny");
    expect(all.tools).toEqual([]);
  });

  it("accepts permissions: (plural) as an alias with a note, in .opencode/agent and elsewhere", () => {
    const frontmatter = ["description: Plural", "permissions:", "  edit: deny", "  bash: ask"].join("\n");
    const agent = parse(frontmatter);
    expect(agent.call("write_file", "a.txt")).toBe("deny");
    expect(agent.shell("ls")).toBe("ask");
    expect(agent.notes).toMatch(/permissions: understood as opencode's "permission" \(singular\)/);
    const text = `---\n${frontmatter}\n---\nBody\n`;
    const elsewhere = parseAgentFile("/project/agents/plural.md", { bytes: Buffer.from(text), text });
    expect(elsewhere.errors).toEqual([]);
    expect(elsewhere.dialect).toBe("opencode");
    // agentd's own permissions are left alone.
    const own = "---\ndescription: Own\npermissions:\n  allow: [read_file]\n---\nBody\n";
    const agentd = parseAgentFile("/project/agents/own.md", { bytes: Buffer.from(own), text: own });
    expect(agentd.dialect).toBe("agentd");
    expect(agentd.frontmatter?.permissions?.allow).toEqual(["read_file"]);
  });

  it("takes the id of code.reviewer.md as code-reviewer, with a note", () => {
    const agent = parse("description: Dotted", "code.reviewer.md");
    expect(agent.parsed.id).toBe("code-reviewer");
    expect(agent.notes).toMatch(/the file name "code.reviewer" has dots: its agent id is "code-reviewer"/);
  });
});
