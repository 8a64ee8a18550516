import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { type ClientCommandIo, clientOf, processIo } from "../daemon-client.js";
import { editMemory } from "./memory-editor.js";

/** What GET/PUT /agents/:id/memory and /memories/:scope answer. */
const MemoryResponseSchema = z.object({
  memory: z.string(),
  content: z.string(),
  version: z.string(),
  chars: z.number(),
});

interface MemoryOptions {
  set?: string;
  ifVersion?: string;
  shared?: boolean;
  edit?: boolean;
}

/**
 * `agentd memory <agent>`: prints the memory the agent uses (`--shared`: the shared memory of that
 * name). `--edit` opens it in the user's editor and saves it by compare-and-set. `--set -` replaces it with stdin (`--set <file>` with a file), as of `--if-version` when
 * given (the version `--json` printed), else as of now; a memory changed meanwhile is refused.
 */
export function registerMemoryCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("memory <agent>")
    .description("print an agent's memory; --set - replaces it with stdin (409 if it changed meanwhile)")
    .option("--set <file>", "replace the memory with this file's text, or stdin for -")
    .option("--if-version <version>", "with --set: only if the memory is still at this version")
    .option("--shared", "<agent> names a shared memory (frontmatter memory.scope), not an agent")
    .option("--edit", "open the memory in $VISUAL or $EDITOR (else vi); saved only if unchanged meanwhile")
    .action(async (name: string, options: MemoryOptions, command: Command) => {
      const { client, json } = clientOf(command, io);
      const path =
        options.shared === true
          ? `/memories/${encodeURIComponent(name)}`
          : `/agents/${encodeURIComponent(name)}/memory`;
      if (options.edit === true) {
        await editMemory(
          {
            read: () => client.get(path, MemoryResponseSchema),
            save: (content, version) => client.put(path, { content, version }, MemoryResponseSchema),
          },
          io.environment,
          io.out,
          `agentd memory ${name}${options.shared === true ? " --shared" : ""}`,
        );
        return;
      }
      if (options.set === undefined) {
        const memory = await client.get(path, MemoryResponseSchema);
        io.out(json ? JSON.stringify(memory) : memory.content.replace(/\n$/, ""));
        if (!json) io.err(`${memory.memory}, version ${memory.version}, ${memory.chars} characters`);
        return;
      }
      if (options.ifVersion === undefined && options.set === "-" && process.stdin.isTTY) {
        throw new AgentdError("USAGE", "--set - reads the new memory from stdin; pipe it in", {
          hint: `agentd memory ${name} > notes.md, edit it, then agentd memory ${name} --set - < notes.md`,
        });
      }
      const content = options.set === "-" ? await readStdin() : await readFile(options.set, "utf8");
      const version = options.ifVersion ?? (await client.get(path, MemoryResponseSchema)).version;
      const memory = await client.put(path, { content, version }, MemoryResponseSchema);
      io.out(
        json
          ? JSON.stringify(memory)
          : `${memory.memory} saved: version ${memory.version}, ${memory.chars} characters`,
      );
    });
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
