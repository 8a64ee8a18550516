import type { Command } from "commander";
import { loginUrl } from "../../api/api-token-file.js";
import { AgentdError } from "../../errors/agentd-error.js";
import { type ClientCommandIo, clientOf, clientToken, processIo } from "../daemon-client.js";
import { loadConfig } from "../../config/load-config.js";
import type { GlobalOptions } from "../output.js";

/**
 * `agentd token [--url]`: prints the API token clients use (`AGENTD_TOKEN`, else `server.token`,
 * else `<data_dir>/api.token`), or with `--url` the browser login URL. For
 * `curl -H "Authorization: Bearer $(agentd token)"`.
 */
export function registerTokenCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("token")
    .description("print the API token (or with --url the browser login URL) of the daemon of this config")
    .option("--url", "print the URL that logs a browser in")
    .action((options: { url?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const { config } = loadConfig({ file: globals.config, environment: io.environment });
      const token = clientToken(config, io.environment);
      if (token === undefined) {
        throw new AgentdError(
          "NOT_FOUND",
          config.server.auth === "none" ? "authentication is off (server.auth: none)" : "no API token yet",
          { hint: "agentd start generates one in <data_dir>/api.token on its first start" },
        );
      }
      const text = options.url ? loginUrl(clientOf(command, io).client.baseUrl, token) : token;
      io.out(globals.json ? JSON.stringify(options.url ? { url: text } : { token: text }) : text);
    });
}
