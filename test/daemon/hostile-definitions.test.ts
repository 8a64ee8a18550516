import { symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

interface AgentSummary {
  id: string;
  valid: boolean;
  errors: string[];
}

/** A "billion laughs": ten levels of ten aliases each. */
function aliasBomb(): string {
  const lines = ["description: laughs", "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"];
  for (let level = 1; level < 10; level += 1) {
    lines.push(`l${level}: &l${level} [${Array.from({ length: 10 }, () => `*l${level - 1}`).join(", ")}]`);
  }
  return `---\n${lines.join("\n")}\n---\nbody\n`;
}

describe("hostile definition files", () => {
  it("starts at once next to deep nesting, alias bombs, 60,000 keys and symlink loops, and reports each with file and line", async () => {
    const llm = await kit.scriptedLlm();
    const workspace = kit.project({ llmUrl: llm.url });
    const agents = path.join(workspace.root, "agents");
    workspace.writeAgent("fine", {});
    // Four files just under the 1 MB limit, nesting a few hundred thousand levels deep.
    for (let index = 0; index < 4; index += 1) {
      const depth = 450_000;
      writeFileSync(
        path.join(agents, `deep-${index}.md`),
        `---\ndescription: deep\nnested: ${"[".repeat(depth)}${"]".repeat(depth)}\n---\nbody\n`,
      );
    }
    writeFileSync(path.join(agents, "bomb.md"), aliasBomb());
    // 60,000 plain keys, under the 1 MB limit: the YAML library's quadratic duplicate-key check
    // would hold the event loop for minutes; the entry limit refuses it before parsing.
    const keys = Array.from({ length: 60_000 }, (_, index) => `k${index}: 1`).join("\n");
    writeFileSync(path.join(agents, "keys.md"), `---\ndescription: keys\n${keys}\n---\nbody\n`);
    symlinkSync(path.join(agents, "loop-b.md"), path.join(agents, "loop-a.md"));
    symlinkSync(path.join(agents, "loop-a.md"), path.join(agents, "loop-b.md"));

    const daemon = await kit.daemon(workspace.configFile);
    expect((await daemon.request("GET", "/health")).status).toBe(200);
    const { agents: listed } = (await daemon.request("GET", "/agents")).body as { agents: AgentSummary[] };
    const byId = new Map(listed.map((agent) => [agent.id, agent]));
    expect(byId.get("fine")?.valid).toBe(true);
    for (let index = 0; index < 4; index += 1) {
      const deep = byId.get(`deep-${index}`);
      expect(deep?.valid).toBe(false);
      expect(deep?.errors[0]).toMatch(new RegExp(`deep-${index}\\.md:3: .*nests more than 64 levels`));
    }
    expect(byId.get("bomb")?.errors[0]).toMatch(/bomb\.md:4: .*aliases expand past 100/);
    expect(byId.get("keys")?.errors[0]).toMatch(/keys\.md:\d+: .*more than 10000 entries/);
    for (const id of ["loop-a", "loop-b"]) {
      expect(byId.get(id)?.errors[0]).toMatch(/symbolic link loop/);
      expect(byId.get(id)?.errors[0]).not.toMatch(/permission/);
    }
  });
});
