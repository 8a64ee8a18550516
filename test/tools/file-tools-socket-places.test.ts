import { existsSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolHarness } from "../support/tool-harness.js";

const FILE_TOOLS = { allow: ["read_file", "write_file", "list_dir", "search_files"] };
const AGENT_TEXT = "ssh-agent-session-7f3a";

let harness: ToolHarness | undefined;

afterEach(() => harness?.dispose());

/**
 * A daemon whose SSH agent's socket sits in `socketFolder` (relative to the harness's temp
 * folder): that folder is one of the host's socket places (socket-places.ts), hidden in every
 * sandbox. A regular file stands in for the socket: what matters is whether the tools reach it.
 */
function withAgentSocketIn(socketFolder: string): ToolHarness {
  return new ToolHarness({
    permissions: FILE_TOOLS,
    hostEnvironment: (base) => ({
      HOME: process.env["HOME"],
      PATH: process.env["PATH"],
      SSH_AUTH_SOCK: path.join(base, socketFolder, "agent.1"),
    }),
  });
}

/** The stand-in socket and a note beside it, in `folder` of the workdir. */
function socketFolderIn(workdir: string, folder: string): void {
  mkdirSync(path.join(workdir, folder));
  writeFileSync(path.join(workdir, folder, "agent.1"), `${AGENT_TEXT}\n`);
}

/** Whether the file tools neither read, list, search nor write inside `folder` of the workdir. */
async function expectHidden(tools: ToolHarness, folder: string): Promise<void> {
  const read = await tools.call("read_file", { path: `${folder}/agent.1` });
  expect({ folder, code: read.code }).toEqual({ folder, code: "TOOL_DENIED" });
  expect(read.output).not.toContain(AGENT_TEXT);
  const listing = await tools.call("list_dir", { path: folder });
  expect({ folder, code: listing.code }).toEqual({ folder, code: "TOOL_DENIED" });
  const everything = await tools.call("list_dir", { recursive: true });
  expect(everything.output).not.toContain(`${folder}/agent.1`);
  const search = await tools.call("search_files", { pattern: AGENT_TEXT });
  expect(search.output).not.toContain(`${folder}/`);
  const write = await tools.call("write_file", { path: `${folder}/planted.sh`, content: "exit 0" });
  expect({ folder, code: write.code }).toEqual({ folder, code: "TOOL_DENIED" });
  expect(existsSync(path.join(tools.workdir, folder, "planted.sh"))).toBe(false);
}

/** Whether the file tools read and write inside `folder` of the workdir as anywhere else. */
async function expectShown(tools: ToolHarness, folder: string): Promise<void> {
  const read = await tools.call("read_file", { path: `${folder}/agent.1` });
  expect({ folder, ok: read.ok, output: read.output }).toEqual({ folder, ok: true, output: AGENT_TEXT });
  const write = await tools.call("write_file", { path: `${folder}/note.md`, content: "kept" });
  expect({ folder, ok: write.ok }).toEqual({ folder, ok: true });
}

describe("file tools: the host's socket places stay hidden, as in the sandbox", () => {
  it("refuses a socket place inside the workdir, and shows the folder beside it", async () => {
    harness = withAgentSocketIn(path.join("work", "ssh-agent"));
    socketFolderIn(harness.workdir, "ssh-agent");
    socketFolderIn(harness.workdir, "beside");
    await expectHidden(harness, "ssh-agent");
    await expectShown(harness, "beside");
  });

  it("refuses a socket place that a link outside the workdir leads into it", async () => {
    // The variable names <temp>/outside/agent-link: by name it is not in the workdir, by real path
    // it is; only resolving the place shows which folder the sandbox hides.
    harness = withAgentSocketIn(path.join("outside", "agent-link"));
    socketFolderIn(harness.workdir, "ssh-agent");
    symlinkSync(path.join(harness.workdir, "ssh-agent"), path.join(harness.outside, "agent-link"));
    await expectHidden(harness, "ssh-agent");
  });

  it("follows the link to the socket place afresh on every call", async () => {
    harness = withAgentSocketIn(path.join("outside", "agent-link"));
    socketFolderIn(harness.workdir, "first");
    socketFolderIn(harness.workdir, "second");
    const link = path.join(harness.outside, "agent-link");
    symlinkSync(path.join(harness.workdir, "first"), link);
    await expectHidden(harness, "first");
    await expectShown(harness, "second");
    // Repointed between two calls, as a new login session would move the agent's socket.
    symlinkSync(path.join(harness.workdir, "second"), `${link}.new`);
    renameSync(`${link}.new`, link);
    await expectShown(harness, "first");
    await expectHidden(harness, "second");
  });
});
