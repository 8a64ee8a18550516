import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { AgentdError } from "../../errors/agentd-error.js";

/** What `agentd memory <agent> --edit` needs from the daemon: read the memory, save by version. */
export interface EditedMemory {
  read(): Promise<{ memory: string; content: string; version: string }>;
  /** PUT with the version it was read at; a 409 CONFLICT when it changed meanwhile. */
  save(content: string, version: string): Promise<{ memory: string; version: string; chars: number }>;
}

/** The editor a user asked for: VISUAL, then EDITOR, then vi. */
export function editorCommand(environment: NodeJS.ProcessEnv): string {
  for (const name of ["VISUAL", "EDITOR"] as const) {
    const value = environment[name]?.trim();
    if (value) return value;
  }
  return "vi";
}

/**
 * Opens the memory in the user's editor and saves it by compare-and-set: the text goes into a
 * private temp file, the editor runs on it (through `sh`, so `EDITOR="code --wait"` works), and an
 * edited text is PUT with the version read before; a memory changed meanwhile is refused, and the
 * edit is kept in its file with the commands to merge it.
 */
export async function editMemory(
  memory: EditedMemory,
  environment: NodeJS.ProcessEnv,
  say: (line: string) => void,
  /** The command that prints this memory (`agentd memory notes`), for the hints. */
  printCommand: string,
): Promise<void> {
  const before = await memory.read();
  const folder = await mkdtemp(path.join(tmpdir(), "agentd-memory-"));
  const file = path.join(folder, `${before.memory.replace(/[^a-z0-9_-]+/gi, "-")}.md`);
  let keep = false;
  try {
    await writeFile(file, before.content, { mode: 0o600 });
    const editor = editorCommand(environment);
    const child = spawn("sh", ["-c", `${editor} "$1"`, "agentd-editor", file], {
      stdio: "inherit",
      env: environment,
    });
    const [code] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
    if (code === 127) {
      throw new AgentdError("USAGE", `the editor "${editor}" was not found`, {
        hint: `set VISUAL or EDITOR to an editor that is installed (EDITOR=nano ${printCommand} --edit), or use --set`,
      });
    }
    if (code !== 0) {
      throw new AgentdError(
        "USAGE",
        `the editor "${editor}" exited with ${code ?? "a signal"}: nothing saved`,
        {
          hint: "save and quit the editor normally to save the memory",
        },
      );
    }
    const after = await readFile(file, "utf8");
    if (after === before.content) {
      say(`${before.memory} unchanged: nothing saved`);
      return;
    }
    try {
      const saved = await memory.save(after, before.version);
      say(`${saved.memory} saved: version ${saved.version}, ${saved.chars} characters`);
    } catch (error) {
      if (!AgentdError.is(error, "CONFLICT")) throw error;
      keep = true;
      throw new AgentdError(
        "CONFLICT",
        `${before.memory} changed while you edited it (a run or another operator wrote it): your edit was not saved`,
        {
          hint: `your text is kept in ${file}: compare it with the memory now (${printCommand}), merge, then ${printCommand} --set ${file}`,
        },
      );
    }
  } finally {
    if (!keep) await rm(folder, { recursive: true, force: true });
  }
}
