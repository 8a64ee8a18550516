import type { Command } from "commander";
import { z } from "zod";
import { loginUrl } from "../../api/api-token-file.js";
import { CreatedTokenSchema, RevokedTokenSchema, TokenListSchema } from "../../api/access-schemas.js";
import { ROLES } from "../../access/role.js";
import { AgentdError } from "../../errors/agentd-error.js";
import { type ClientCommandIo, clientOf, clientToken, processIo } from "../daemon-client.js";
import { loadConfig } from "../../config/load-config.js";
import type { GlobalOptions } from "../output.js";

export const TOKEN_DESCRIPTION =
  "print the API token (or with --url the browser login URL); create, list and revoke named tokens";

/**
 * `agentd token [--url]`: prints the daemon's own API token (`AGENTD_TOKEN`, else `server.token`,
 * else `<data_dir>/api.token`), or with `--url` the browser login URL. For
 * `curl -H "Authorization: Bearer $(agentd token)"`.
 *
 * `agentd token create --name <n> --role <role>` / `list` / `revoke <n>`: named tokens, through
 * the running daemon's API (admin), so they count at once there and within seconds on every node
 * of a cluster. A created token is printed once: only its hash is kept.
 */
export function registerTokenCommand(program: Command, io: ClientCommandIo = processIo): void {
  const token = program
    .command("token")
    .description(TOKEN_DESCRIPTION)
    .option("--url", "print the URL that logs a browser in")
    .action((options: { url?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const { config } = loadConfig({ file: globals.config, environment: io.environment });
      const value = clientToken(config, io.environment);
      if (value === undefined) {
        throw new AgentdError(
          "NOT_FOUND",
          config.server.auth === "none" ? "authentication is off (server.auth: none)" : "no API token yet",
          { hint: "agentd start generates one in <data_dir>/api.token on its first start" },
        );
      }
      const text = options.url ? loginUrl(clientOf(command, io).client.baseUrl, value) : value;
      io.out(globals.json ? JSON.stringify(options.url ? { url: text } : { token: text }) : text);
    });

  token
    .command("create")
    .description("create a named token of a role and print it (once: it is never shown again)")
    .requiredOption("--name <name>", "the token's name (a-z, 0-9, '.', '_', '-'), recorded as the actor")
    .requiredOption("--role <role>", `its role: ${ROLES.join(", ")}`)
    .action(async (options: { name: string; role: string }, command: Command) => {
      const role = z.enum(ROLES).safeParse(options.role);
      if (!role.success) throw new AgentdError("USAGE", `--role must be one of ${ROLES.join(", ")}`);
      const { client, json } = clientOf(command, io);
      const created = await client.post(
        "/tokens",
        { name: options.name, role: role.data },
        CreatedTokenSchema,
      );
      if (json) io.out(JSON.stringify(created));
      else {
        io.out(created.token);
        io.err(`created token "${created.name}" (role ${created.role}); store it now: it is not shown again`);
      }
    });

  token
    .command("list")
    .description("list the named tokens: name, role, created (never the tokens)")
    .action(async (_options: unknown, command: Command) => {
      const { client, json } = clientOf(command, io);
      const listed = await client.get("/tokens", TokenListSchema);
      if (json) {
        io.out(JSON.stringify(listed));
        return;
      }
      io.out(`${listed.default.name.padEnd(24)} admin     (server.token or <data_dir>/api.token)`);
      for (const entry of listed.tokens) {
        io.out(
          `${entry.name.padEnd(24)} ${entry.role.padEnd(9)} ${entry.created_at}${entry.created_by ? `  by ${entry.created_by}` : ""}`,
        );
      }
    });

  token
    .command("revoke <name>")
    .description("revoke a named token: refused from now on (on every node within seconds)")
    .action(async (name: string, _options: unknown, command: Command) => {
      const { client, json } = clientOf(command, io);
      const revoked = await client.delete(`/tokens/${encodeURIComponent(name)}`, RevokedTokenSchema);
      io.out(json ? JSON.stringify(revoked) : `revoked ${revoked.revoked}`);
    });
}
