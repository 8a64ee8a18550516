import { spawnSync } from "node:child_process";
import path from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands/index.js";

/** The built CLI (`npm run build` first, as `npm test` does). */
const MAIN = path.resolve(import.meta.dirname, "../../dist/cli/main.js");

describe("the command table", () => {
  it(
    "lists each command with the usage and description its module registers",
    { timeout: 60_000 },
    async () => {
      for (const [name, entry] of Object.entries(COMMANDS)) {
        const program = new Command("agentd");
        (await entry.load())(program);
        const [command] = program.commands;
        expect(command?.name()).toBe(name);
        const usage = [name, ...(command?.registeredArguments ?? []).map(argumentUsage)].join(" ");
        expect({ usage, description: command?.description() }).toEqual({
          usage: entry.usage,
          description: entry.description,
        });
      }
    },
  );

  it("answers --help and a mistyped command without loading any command module", () => {
    const help = spawnSync(process.execPath, [MAIN, "--help"], { encoding: "utf8" });
    expect(help.status).toBe(0);
    for (const entry of Object.values(COMMANDS)) expect(help.stdout).toContain(entry.usage);
    const typo = spawnSync(process.execPath, [MAIN, "--config", "run", "rnu"], { encoding: "utf8" });
    expect(typo.status).toBe(2);
    expect(typo.stderr).toContain("Did you mean run?");
  });

  it("runs the command the line names, after root options and after help", () => {
    const help = spawnSync(process.execPath, [MAIN, "--json", "help", "run"], { encoding: "utf8" });
    expect(help.stdout).toContain("Usage: agentd run [options] <agent> [task]");
  });
});

function argumentUsage(argument: { name(): string; required: boolean; variadic: boolean }): string {
  const name = `${argument.name()}${argument.variadic ? "..." : ""}`;
  return argument.required ? `<${name}>` : `[${name}]`;
}
