import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentStatus } from "../../src/definitions/definition-snapshot.js";
import { loadDefinitions } from "../../src/definitions/load-definitions.js";
import { agentText, createTempProject, type TempProject } from "../support/temp-project.js";

/** Every way an agent file can ask for its fence to come down, and the line its `sandbox` key is on. */
const FORMS: Record<string, { text: string; asked: Record<string, string> }> = {
  "short-off": { text: "sandbox: off\n", asked: { mode: "off" } },
  "quoted-off": { text: 'sandbox: "off"\n', asked: { mode: "off" } },
  "flow-mode": { text: "sandbox: { mode: off }\n", asked: { mode: "off" } },
  "block-mode": { text: "sandbox:\n  write: [out]\n  mode: 'off'\n", asked: { mode: "off" } },
  "network-all": { text: "sandbox: { network: all }\n", asked: { network: "all" } },
  "both-off": { text: 'sandbox: { mode: "off", network: "all" }\n', asked: { mode: "off", network: "all" } },
  anchored: { text: "x-fence: &fence { mode: off }\nsandbox: *fence\n", asked: { mode: "off" } },
};

function statusOf(agents: readonly AgentStatus[], id: string): AgentStatus {
  const status = agents.find((agent) => agent.id === id);
  if (!status) throw new Error(`no agent ${id}`);
  return status;
}

describe("an agent file that switches its own sandbox off", () => {
  let project: TempProject;
  afterEach(() => project.remove());

  it("is invalid with SANDBOX_OFF_NOT_ALLOWED in every form, naming the file, the line and what to add to config", async () => {
    project = createTempProject();
    for (const [id, form] of Object.entries(FORMS)) project.writeAgent(`${id}.md`, agentText(id, form.text));
    project.writeAgent(
      "narrow.md",
      agentText("narrow", "sandbox: { mode: read-only, network: [api.github.com] }\n"),
    );
    const snapshot = await loadDefinitions(project.config);

    expect(statusOf(snapshot.agents, "narrow").valid).toBe(true);
    for (const [id, form] of Object.entries(FORMS)) {
      const status = statusOf(snapshot.agents, id);
      expect(status.valid, id).toBe(false);
      expect(snapshot.get(id), id).toBeUndefined();
      const [error] = status.errors;
      expect(error?.toJSON(), id).toMatchObject({
        code: "SANDBOX_OFF_NOT_ALLOWED",
        file: path.join(project.agentsDirectory, `${id}.md`),
        line: id === "anchored" ? 4 : 3,
        field: "sandbox",
        details: { agent: id, asked: form.asked, config_key: "sandbox.allow_unsandboxed" },
      });
      expect(error?.hint, id).toContain(`sandbox: { allow_unsandboxed: ["${id}"] }`);
    }
    expect(statusOf(snapshot.agents, "both-off").errors[0]?.message).toContain("mode: off and network: all");
  });

  it("loads when config allow_unsandboxed names its id or a glob matching it, and only then", async () => {
    project = createTempProject({ config: { sandbox: { allow_unsandboxed: ["trusted", "ops-*"] } } });
    project.writeAgent("trusted.md", agentText("trusted", "sandbox: off\n"));
    project.writeAgent("ops-deploy.md", agentText("ops", "sandbox: { network: all }\n"));
    project.writeAgent("trusted2.md", agentText("near miss", "sandbox: off\n"));
    project.writeAgent("ops.md", agentText("not the glob", "sandbox: off\n"));
    const snapshot = await loadDefinitions(project.config);

    expect(snapshot.get("trusted")?.sandbox.mode).toBe("off");
    expect(snapshot.get("trusted")?.warnings.join("\n")).toMatch(
      /trusted\.md:3 sandbox: off — .*every secret/,
    );
    expect(snapshot.get("ops-deploy")?.sandbox.network).toBe("all");
    for (const id of ["trusted2", "ops"]) {
      expect(statusOf(snapshot.agents, id).errors[0]?.code).toBe("SANDBOX_OFF_NOT_ALLOWED");
      // The hint keeps what config already lists.
      expect(statusOf(snapshot.agents, id).errors[0]?.hint).toContain(
        `allow_unsandboxed: ["trusted", "ops-*", "${id}"]`,
      );
    }
  });

  it("needs no consent when config itself is off (the operator's choice for every agent)", async () => {
    project = createTempProject({ config: { sandbox: "off" } });
    project.writeAgent("plain.md", agentText("plain"));
    project.writeAgent("says-off.md", agentText("says off", "sandbox: off\n"));
    const snapshot = await loadDefinitions(project.config);
    expect(snapshot.get("plain")?.sandbox.mode).toBe("off");
    expect(snapshot.get("says-off")?.sandbox.mode).toBe("off");
  });

  it("cannot grant itself consent, nor get it through a preset", async () => {
    project = createTempProject();
    project.writeAgent("self.md", agentText("self", "sandbox: { mode: off, allow_unsandboxed: [self] }\n"));
    project.writePreset("loose.yaml", "role: Loose\nsandbox: off\n");
    project.writeAgent("preset-user.md", agentText("preset user", "preset: loose\n"));
    const snapshot = await loadDefinitions(project.config);

    const self = statusOf(snapshot.agents, "self");
    expect(self.valid).toBe(false);
    expect(self.errors.map((error) => error.describe()).join("\n")).toMatch(/allow_unsandboxed/);
    expect(snapshot.get("self")).toBeUndefined();
    const presetUser = statusOf(snapshot.agents, "preset-user");
    expect(presetUser.valid).toBe(false);
    expect(presetUser.errors[0]?.code).toBe("PRESET_INVALID");
    expect(snapshot.get("preset-user")).toBeUndefined();
  });

  it("is refused in a Claude Code agent file too", async () => {
    project = createTempProject({ config: { agents_dirs: ["./.claude/agents"] } });
    const folder = path.join(project.root, ".claude", "agents");
    mkdirSync(folder, { recursive: true });
    writeFileSync(
      path.join(folder, "reviewer.md"),
      "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Bash\nsandbox: off\n---\nReview.\n",
    );
    const snapshot = await loadDefinitions({
      ...project.config,
      agents_dirs: [folder],
    });
    const reviewer = statusOf(snapshot.agents, "reviewer");
    expect(reviewer.errors[0]).toMatchObject({ code: "SANDBOX_OFF_NOT_ALLOWED", line: 5 });
  });

  it("keeps a sandboxed agent from handing work to an unsandboxed one, at any depth, unless config names it", async () => {
    project = createTempProject({ config: { sandbox: { allow_unsandboxed: ["open", "trusted-caller"] } } });
    project.writeAgent("open.md", agentText("open", "sandbox: off\n"));
    project.writeAgent("caller.md", agentText("caller", "agents: [open]\n"));
    project.writeAgent("relay.md", agentText("relay", "agents: [helper]\n"));
    project.writeAgent("helper.md", agentText("helper", "sandbox: { network: all }\n"));
    project.writeAgent("trusted-caller.md", agentText("trusted", "agents: [open]\n"));
    project.writeAgent("reader.md", agentText("reader", "capabilities: read-only\nagents: [open]\n"));
    project.writeAgent("plain.md", agentText("plain", "agents: [other]\n"));
    project.writeAgent("other.md", agentText("other"));
    const snapshot = await loadDefinitions(project.config);

    expect(statusOf(snapshot.agents, "caller").errors[0]?.toJSON()).toMatchObject({
      code: "SANDBOX_OFF_NOT_ALLOWED",
      line: 3,
      field: "agents[0]",
      details: { agent: "caller", sub_agent: "open" },
    });
    expect(statusOf(snapshot.agents, "caller").errors[0]?.hint).toContain(
      'allow_unsandboxed: ["open", "trusted-caller", "caller"]',
    );
    // helper asks for network: all without consent: it never runs so, and relay may call it.
    expect(statusOf(snapshot.agents, "helper").errors[0]?.code).toBe("SANDBOX_OFF_NOT_ALLOWED");
    expect(statusOf(snapshot.agents, "relay").valid).toBe(true);
    for (const id of ["open", "trusted-caller", "reader", "plain", "other"]) {
      expect(statusOf(snapshot.agents, id).valid, id).toBe(true);
    }
  });

  it("follows a chain: a sandboxed agent may not reach an unsandboxed one through a consented relay", async () => {
    project = createTempProject({ config: { sandbox: { allow_unsandboxed: ["open", "relay"] } } });
    project.writeAgent("open.md", agentText("open", "sandbox: off\n"));
    project.writeAgent("relay.md", agentText("relay", "agents: [open]\n"));
    project.writeAgent("front.md", agentText("front", "agents: [relay]\n"));
    const snapshot = await loadDefinitions(project.config);
    expect(statusOf(snapshot.agents, "relay").valid).toBe(true);
    expect(statusOf(snapshot.agents, "front").errors[0]).toMatchObject({
      code: "SANDBOX_OFF_NOT_ALLOWED",
      field: "agents[0]",
    });
  });
});
