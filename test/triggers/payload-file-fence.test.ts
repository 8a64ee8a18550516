import { mkdirSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { writePayloadFile } from "../../src/triggers/payload-file.js";
import { SandboxProject } from "../sandbox/sandbox-project.js";
import { DEFAULT_SANDBOX_LIMITS } from "../../src/config/sandbox-settings.js";

const project = new SandboxProject();
afterAll(() => project.dispose());

const policyOf = (mode: "workspace-write" | "read-only") =>
  project.host().policyFor({
    settings: {
      mode,
      network: "none",
      read: [],
      write: [],
      unix_sockets: [],
      limits: DEFAULT_SANDBOX_LIMITS,
    },
    workdir: project.root,
    owner: 'agent "me"',
  });

const deliver = (mode: "workspace-write" | "read-only") =>
  writePayloadFile({
    workdir: project.root,
    sandbox: policyOf(mode),
    trigger: "push",
    body: Buffer.from('{"planted":true}'),
    now: new Date("2026-03-01T09:00:00Z"),
  });

/**
 * The daemon writes a webhook's payload even into a read-only workdir, for the agent to read. That
 * leave covers the payloads folder only: an agent that pointed `.agentd/payloads` at a place its
 * sandbox keeps read-only inside the workdir (the agents folder, `.git/hooks`) gets no file there.
 */
it("writes a payload into a read-only workdir, for the agent to read", async () => {
  const written = await deliver("read-only");
  expect(written).toMatch(/^\.agentd\/payloads\/push-20260301T090000Z-[0-9a-f]{8}\.json$/);
  rmSync(path.join(project.root, ".agentd", "payloads"), { recursive: true });
});

it("never writes a payload through a link into a read-only place of the workdir", async () => {
  const agents = path.join(project.root, "agents");
  const before = readdirSync(agents);
  mkdirSync(path.join(project.root, ".agentd"), { recursive: true });
  symlinkSync("../agents", path.join(project.root, ".agentd", "payloads"));
  for (const mode of ["workspace-write", "read-only"] as const) {
    await expect(deliver(mode)).rejects.toThrow();
    expect(readdirSync(agents)).toEqual(before);
  }
});
