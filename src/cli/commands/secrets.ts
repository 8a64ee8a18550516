import { createInterface } from "node:readline/promises";
import { Writable } from "node:stream";
import type { Command } from "commander";
import { loadConfig } from "../../config/load-config.js";
import type { Config } from "../../config/config-schema.js";
import { recordSecretChange } from "../secret-audit.js";
import { AgentdError } from "../../errors/agentd-error.js";
import { MIN_REDACTED_LENGTH } from "../../secrets/secret-redactor.js";
import { createVault } from "../../vault/create-vault.js";
import { assertSecretName } from "../../vault/secret-name.js";
import type { Vault } from "../../vault/vault.js";
import { type GlobalOptions, printJson } from "../output.js";

/**
 * `agentd secrets set|get|list|rm <name>`: the vault of config `vault`. A value is read from stdin
 * when piped (one trailing newline dropped) or from a prompt that does not echo, never from argv:
 * a value on the command line stays in shell history and in every process listing.
 */
export function registerSecretsCommand(program: Command): void {
  const secrets = program
    .command("secrets")
    .description("manage the vault's secrets (values from stdin or a hidden prompt, never from argv)");
  subcommand(
    secrets,
    "set <name>",
    "store a secret: the value from stdin, or a hidden prompt on a terminal",
  ).action(async (name: string, _options: unknown, command: Command) => {
    refuseExtraArguments(command, 1);
    assertSecretName(name);
    const { vault, json, config } = open(command);
    // A vault that cannot be opened (no keychain, wrong key) fails before the user types a value.
    await vault.list();
    const value = await readValue(name);
    await vault.set(name, value);
    await recordSecretChange(config, "secret.set", name, warnLine);
    if (value.length < MIN_REDACTED_LENGTH) {
      process.stderr.write(
        `warning: ${name} is shorter than ${MIN_REDACTED_LENGTH} characters; such values are not masked in logs, events and tool output\n`,
      );
    }
    if (json) printJson({ set: name, backend: vault.backend });
    else process.stderr.write(`stored ${name} in the ${vault.backend} vault\n`);
  });
  subcommand(secrets, "get <name>", "print a secret's value").action(
    async (name: string, _options: unknown, command: Command) => {
      refuseExtraArguments(command, 1);
      assertSecretName(name);
      const { vault, json } = open(command);
      const value = await vault.get(name);
      if (value === undefined) throw notFound(name, vault);
      if (json) printJson({ name, value });
      else process.stdout.write(`${value}\n`);
    },
  );
  subcommand(secrets, "list", "list the names of the secrets (never their values)").action(
    async (_options: unknown, command: Command) => {
      refuseExtraArguments(command, 0);
      const { vault, json } = open(command);
      const names = await vault.list();
      if (json) printJson({ secrets: names });
      else if (names.length === 0) process.stderr.write(`no secrets in the ${vault.backend} vault\n`);
      else process.stdout.write(`${names.join("\n")}\n`);
    },
  );
  subcommand(secrets, "rm <name>", "remove a secret").action(
    async (name: string, _options: unknown, command: Command) => {
      refuseExtraArguments(command, 1);
      assertSecretName(name);
      const { vault, json, config } = open(command);
      if (!(await vault.remove(name))) throw notFound(name, vault);
      await recordSecretChange(config, "secret.remove", name, warnLine);
      if (json) printJson({ removed: name, backend: vault.backend });
      else process.stderr.write(`removed ${name} from the ${vault.backend} vault\n`);
    },
  );
}

/** Unknown options count as extra arguments, so a mistyped `--value=…` is refused without being echoed. */
function subcommand(parent: Command, usage: string, description: string): Command {
  return parent.command(usage).description(description).allowUnknownOption().allowExcessArguments();
}

/** Extra words may be a secret typed on the command line: refused without repeating them. */
function refuseExtraArguments(command: Command, expected: number): void {
  const extra = command.args.length - expected;
  if (extra <= 0) return;
  throw new AgentdError(
    "USAGE",
    `agentd secrets ${command.name()} takes ${expected === 0 ? "no arguments" : "only the secret's name"}; ` +
      `${extra} more argument${extra > 1 ? "s were" : " was"} given and ignored`,
    {
      hint:
        "a value is never read from the command line (it would stay in shell history): " +
        'pipe it on stdin (printf %s "$VALUE" | agentd secrets set NAME) or type it at the prompt',
    },
  );
}

function open(command: Command): { vault: Vault; json: boolean; config: Config } {
  const globals = command.optsWithGlobals<GlobalOptions>();
  const { config } = loadConfig({ file: globals.config });
  return { vault: createVault(config), json: Boolean(globals.json), config };
}

function warnLine(line: string): void {
  process.stderr.write(`${line}\n`);
}

function notFound(name: string, vault: Vault): AgentdError {
  return new AgentdError("SECRET_NOT_FOUND", `secret "${name}" is not in the ${vault.backend} vault`, {
    hint: "agentd secrets list shows the names it holds",
  });
}

/** The value from stdin when piped, else a prompt on the terminal that does not echo. */
async function readValue(name: string): Promise<string> {
  const value = process.stdin.isTTY ? await promptHidden(`value for ${name}: `) : await readStdin();
  if (value === "") {
    throw new AgentdError("USAGE", `no value given for ${name}; nothing was stored`, {
      hint: `pipe the value on stdin (printf %s "$VALUE" | agentd secrets set ${name}) or type it at the prompt`,
    });
  }
  return value;
}

/** All of stdin, minus one trailing newline (the one `echo` adds). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

/** Asks on stderr and reads one line from the terminal; what is typed is never written back. */
async function promptHidden(question: string): Promise<string> {
  let muted = false;
  const output = new Writable({
    write: (chunk: Buffer, _encoding, callback) => {
      if (!muted) process.stderr.write(chunk);
      callback();
    },
  });
  const lines = createInterface({ input: process.stdin, output, terminal: true });
  const cancelled = new Promise<never>((_resolve, reject) => {
    const cancel = () => reject(new AgentdError("USAGE", "cancelled; nothing was stored"));
    lines.once("SIGINT", cancel);
    lines.once("close", cancel);
  });
  try {
    const answer = lines.question(question);
    muted = true;
    return await Promise.race([answer, cancelled]);
  } finally {
    muted = false;
    lines.close();
    process.stderr.write("\n");
  }
}
