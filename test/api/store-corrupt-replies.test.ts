import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

/**
 * A damaged state file of data_dir reaches a client as 500 STORE_CORRUPT naming the file relative
 * to data_dir (docs/http-api.md), whichever store it belongs to: never the host's path, which a
 * client holding any token (a `read` one too) has no business knowing.
 */
describe("a damaged state file in an HTTP answer", () => {
  it("is named relative to data_dir, with what to do, and never by its absolute path", async () => {
    const { project } = await kit.scriptedProject(() => textReply("done"));
    project.writeAgent("keeper", { memory: "write" });
    const daemon = await kit.daemon(project.configFile);
    const created = await daemon.request("POST", "/tokens", { name: "reader", role: "read" });
    expect(created.status).toBe(201);
    const reader = (created.body as { token: string }).token;
    const asReader = async (urlPath: string) => {
      const reply = await fetch(`${daemon.url}${urlPath}`, {
        headers: { authorization: `Bearer ${reader}` },
      });
      return { status: reply.status, body: (await reply.json()) as { error: Record<string, string> } };
    };
    // A client holding a read token: the memory file of an agent is a FIFO.
    mkdirSync(path.join(project.dataDirectory, "memory", "agents"), { recursive: true });
    execFileSync("mkfifo", [path.join(project.dataDirectory, "memory", "agents", "keeper.md")]);
    const memory = await asReader("/agents/keeper/memory");
    expect(memory).toMatchObject({ status: 500, body: { error: { code: "STORE_CORRUPT" } } });
    expect(memory.body.error.message).toContain("memory/agents/keeper.md");

    const tokens = path.join(project.dataDirectory, "tokens.json");

    writeFileSync(tokens, "not json");
    const garbled = await daemon.request("POST", "/tokens", { name: "runner", role: "run" });
    expect(garbled).toMatchObject({
      status: 500,
      body: {
        error: {
          code: "STORE_CORRUPT",
          message: "tokens.json is not a token list",
          hint: expect.any(String),
        },
      },
    });

    rmSync(tokens);
    execFileSync("mkfifo", [tokens]);
    const fifo = await daemon.request("POST", "/tokens", { name: "runner", role: "run" });
    expect(fifo).toMatchObject({
      status: 500,
      body: { error: { code: "STORE_CORRUPT", message: "tokens.json is a FIFO, not a regular file" } },
    });
    rmSync(tokens);

    mkdirSync(tokens);
    const folder = await daemon.request("POST", "/tokens", { name: "runner", role: "run" });
    expect(folder).toMatchObject({
      status: 500,
      body: {
        error: {
          code: "STORE_CORRUPT",
          message: "tokens.json is a folder, not a regular file",
          hint: expect.stringMatching(/^move it aside/),
        },
      },
    });
    rmSync(tokens, { recursive: true });

    for (const reply of [garbled.body, fifo.body, folder.body, memory.body])
      expect(JSON.stringify(reply)).not.toContain(project.root);
  });
});
