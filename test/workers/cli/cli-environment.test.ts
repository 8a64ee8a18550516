import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliHarness } from "./cli-test-kit.js";

/**
 * What a daemon's environment typically holds beside agentd's own needs: cloud keys, a database
 * URL with its password, other tools' API keys, a proxy with credentials, an exported shell
 * function. None of them may reach a CLI child unless its config `env` names it.
 */
const DAEMON_SECRETS: Record<string, string> = {
  AWS_SECRET_ACCESS_KEY: "aws-secret-7c1e",
  AWS_ACCESS_KEY_ID: "AKIAEXAMPLE7C1E",
  DATABASE_URL: "postgres://agentd:db-password-41f2@127.0.0.1/agentd",
  PGPASSWORD: "pg-password-41f2",
  GITHUB_TOKEN: "ghp_daemon_9b3d",
  HTTPS_PROXY: "http://user:proxy-password-5e6a@proxy.example:3128",
  NPM_TOKEN: "npm_daemon_2c8f",
  "BASH_FUNC_evil%%": "() { echo exported function; }",
  AGENTD_TOKEN: "api-token-0d4e",
};

/** Each built-in CLI's own key, set in the daemon's environment: only that CLI gets it. */
const OWN_KEYS: Record<string, string> = {
  ANTHROPIC_API_KEY: "anthropic-key-3a9b",
  OPENAI_API_KEY: "openai-key-8d2c",
  GEMINI_API_KEY: "gemini-key-6f1a",
};

/** The fakes' recording variables, which the harness passes in each tool's configured `env`. */
const FAKE_VARIABLE = /^FAKE_CLI_/;
/**
 * What agentd adds itself: the run's temp folder, the process marker, the proxy of the sandbox's
 * host list (the CLI's API hosts), the CLI's own settings; bubblewrap sets PWD.
 */
const AGENTD_VARIABLE =
  /^(TMPDIR|TMP|TEMP|PWD|PROCESS_TREE_MARKER|(HTTP|HTTPS|ALL|NO)_PROXY|(http|https|all|no)_proxy|CLAUDE_CODE_MAX_RETRIES|GEMINI_SYSTEM_MD|GEMINI_CLI_SYSTEM_SETTINGS_PATH|GEMINI_CLI_TRUST_WORKSPACE)$/;
/** The common base every CLI may inherit (docs/cli-workers.md). */
const BASE_VARIABLE =
  /^(HOME|USER|LOGNAME|SHELL|PATH|LANG|LANGUAGE|LC_[A-Z_]+|TERM|TZ|XDG_(CONFIG|CACHE|DATA|STATE)_HOME|SSL_CERT_FILE|SSL_CERT_DIR|NODE_EXTRA_CA_CERTS)$/;

const saved: Record<string, string | undefined> = {};
beforeAll(() => {
  for (const [name, value] of Object.entries({ ...DAEMON_SECRETS, ...OWN_KEYS })) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe("the environment of a CLI worker's child", () => {
  it.each([
    ["claude", "ANTHROPIC_API_KEY", /^(ANTHROPIC_|CLAUDE_|DISABLE_)/],
    ["codex", "OPENAI_API_KEY", /^(OPENAI_|CODEX_)/],
    ["gemini", "GEMINI_API_KEY", /^(GEMINI_|GOOGLE_)/],
  ])(
    "%s gets the common base, its own %s and its configured env, nothing else of the daemon's",
    async (tool, key, own) => {
      const harness = cliHarness({
        cliTools: {
          [tool]: { env: { CONFIGURED_BY_OPERATOR: "yes", DATABASE_URL: "postgres://configured" } },
        },
      });
      const outcome = await harness.run({ tool, fallback: "none" });
      expect(outcome.status).toBe("completed");
      const { environment, env } = harness.recordedArguments();
      const names = Object.keys(environment);
      const values = Object.values(environment).join("\n");

      expect(names).toContain("PATH");
      expect(names).toContain("HOME");
      expect(names).toContain(key);
      expect(names).toContain("CONFIGURED_BY_OPERATOR");
      // A configured variable is passed as given, even under the name of a daemon's secret.
      expect(names).toContain("DATABASE_URL");
      for (const other of Object.keys(OWN_KEYS).filter((name) => name !== key))
        expect(names).not.toContain(other);
      for (const [name, value] of Object.entries(DAEMON_SECRETS)) {
        if (name !== "DATABASE_URL") expect(values).not.toContain(value);
      }
      expect(environment["DATABASE_URL"]).toBe("postgres://configured");
      // The proxy variables are agentd's own, toward the CLI's API hosts, not the daemon's proxy.
      expect(environment["HTTPS_PROXY"]).toBe("http://127.0.0.1:3128");
      const unexpected = names.filter(
        (name) =>
          !BASE_VARIABLE.test(name) &&
          !own.test(name) &&
          !FAKE_VARIABLE.test(name) &&
          !AGENTD_VARIABLE.test(name) &&
          !["CONFIGURED_BY_OPERATOR", "DATABASE_URL"].includes(name),
      );
      expect(unexpected).toEqual([]);
      // The CLI's own key arrives with its value; the run's temp folder is agentd's.
      expect(env[key]).toBe(OWN_KEYS[key]);
      expect(env["TMPDIR"]).toContain("cli-runs");
    },
  );

  it("gives a tool from config cli_tools the common base and its configured env only", async () => {
    const harness = cliHarness({
      cliTools: {
        printenv: {
          command: "/usr/bin/env",
          args: [],
          output: "text",
          env: { CONFIGURED_BY_OPERATOR: "yes" },
        },
      },
    });
    const outcome = await harness.run({ tool: "printenv", fallback: "none" });
    expect(outcome.status).toBe("completed");
    const printed = outcome.result ?? "";
    for (const value of [...Object.values(DAEMON_SECRETS), ...Object.values(OWN_KEYS)])
      expect(printed).not.toContain(value);
    const names = printed
      .split("\n")
      .map((line) => /^([^=\s]+)=/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined);
    expect(names).toContain("PATH");
    expect(names).toContain("CONFIGURED_BY_OPERATOR");
    expect(
      names.filter(
        (name) =>
          !BASE_VARIABLE.test(name) &&
          !FAKE_VARIABLE.test(name) &&
          !AGENTD_VARIABLE.test(name) &&
          name !== "CONFIGURED_BY_OPERATOR",
      ),
    ).toEqual([]);
  });
});
