import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { toErrorReply } from "../../src/api/error-reply.js";
import { FileMemoryStore, memoryFile } from "../../src/memory/file-memory-store.js";

let folder: string | undefined;
afterEach(() => {
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

describe("FileMemoryStore", () => {
  it("answers a folder in a memory file's place as a damaged store naming the file, not as a bug", async () => {
    folder = mkdtempSync(path.join(os.tmpdir(), "agentd-memory-store-"));
    mkdirSync(memoryFile(folder, { kind: "agent", agent: "keeper" }), { recursive: true });
    const store = new FileMemoryStore(folder);

    const error = await store.read({ kind: "agent", agent: "keeper" }).catch((caught: unknown) => caught);

    expect(toErrorReply(error)).toMatchObject({
      statusCode: 500,
      internal: false,
      body: {
        error: {
          code: "STORE_CORRUPT",
          message: "the memory file memory/agents/keeper.md cannot be read (EISDIR)",
          hint: expect.stringMatching(/move aside/),
        },
      },
    });
  });
});
