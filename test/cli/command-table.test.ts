import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands/index.js";
import { agentd } from "../support/agentd-cli.js";

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

  it("answers --help and a mistyped command without loading any command module", async () => {
    const help = await agentd(["--help"]);
    expect(help.exitCode).toBe(0);
    for (const entry of Object.values(COMMANDS)) expect(help.stdout).toContain(entry.usage);
    const typo = await agentd(["--config", "run", "rnu"]);
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain("Did you mean run?");
  });

  it("runs the command the line names, after root options and after help", async () => {
    const help = await agentd(["--json", "help", "run"]);
    expect(help.stdout).toContain("Usage: agentd run [options] <agent> [task]");
  });
});

function argumentUsage(argument: { name(): string; required: boolean; variadic: boolean }): string {
  const name = `${argument.name()}${argument.variadic ? "..." : ""}`;
  return argument.required ? `<${name}>` : `[${name}]`;
}
