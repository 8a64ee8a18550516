import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AGENTD_MAIN, agentd as agentdIn } from "../support/agentd-cli.js";
import { useTestKit } from "../support/test-kit.js";

/** Each test starts several CLI processes; a loaded machine takes a second or more for each. */
const SLOW = { timeout: 60_000 };

const kit = useTestKit();

/** A fresh project folder (its config keeps `data_dir: ./data`) and the CLI run inside it. */
function project() {
  const { root: directory, dataDirectory } = kit.project();
  /** Runs `agentd <args>` in the project with `stdin` piped in (closed at once when undefined). */
  const agentd = async (
    args: string[],
    options: { stdin?: string; environment?: Record<string, string> } = {},
  ) => {
    const result = await agentdIn(args, {
      cwd: directory,
      input: options.stdin ?? "",
      environment: options.environment,
    });
    return { code: result.exitCode, stdout: result.stdout, stderr: result.stderr };
  };
  const dataFile = (name: string) => path.join(dataDirectory, name);
  return { directory, agentd, dataFile };
}

describe("agentd secrets with the file vault", SLOW, () => {
  it("sets a value from stdin, then gets, lists and removes it", async () => {
    const { agentd } = project();
    // Calls that do not depend on each other run at once (the vault takes concurrent sets, as the
    // next test checks): a CLI process costs a second or more on a loaded machine.
    const [set, setSecond] = await Promise.all([
      agentd(["secrets", "set", "github_token"], { stdin: "ghp-piped-value-42\n" }),
      agentd(["secrets", "set", "openai"], { stdin: "sk-second-one" }),
    ]);
    expect(set).toMatchObject({ code: 0, stdout: "" });
    expect(set.stderr).toContain("stored github_token in the file vault");
    expect(setSecond.code).toBe(0);

    const [get, list, listJson] = await Promise.all([
      agentd(["secrets", "get", "github_token"]),
      agentd(["secrets", "list"]),
      agentd(["secrets", "list", "--json"]),
    ]);
    expect(get).toMatchObject({ code: 0, stdout: "ghp-piped-value-42\n" });
    expect(list).toMatchObject({ code: 0, stdout: "github_token\nopenai\n" });
    expect(JSON.parse(listJson.stdout)).toEqual({ secrets: ["github_token", "openai"] });

    expect((await agentd(["secrets", "rm", "openai"])).code).toBe(0);
    const missing = await agentd(["secrets", "get", "openai"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error SECRET_NOT_FOUND: secret "openai" is not in the file vault');
  });

  it("keeps every secret when several processes set them at once on a fresh project", async () => {
    const { agentd } = project();
    const names = ["one", "two", "three", "four"];
    const results = await Promise.all(
      names.map((name) => agentd(["secrets", "set", name], { stdin: `value-of-${name}` })),
    );
    expect(results.map((result) => result.code)).toEqual([0, 0, 0, 0]);
    const [list, three] = await Promise.all([
      agentd(["secrets", "list", "--json"]),
      agentd(["secrets", "get", "three"]),
    ]);
    expect(JSON.parse(list.stdout)).toEqual({ secrets: [...names].sort() });
    expect(three.stdout).toBe("value-of-three\n");
  });

  it("keeps the value encrypted: the vault file lacks it and the key file is 0600", async () => {
    const { agentd, dataFile } = project();
    const value = "plaintext-must-not-appear-9f1c";
    expect((await agentd(["secrets", "set", "api"], { stdin: value })).code).toBe(0);
    const vaultText = readFileSync(dataFile("vault.json"), "utf8");
    expect(vaultText).toContain("aes-256-gcm");
    expect(vaultText).not.toContain(value);
    expect(vaultText).not.toContain(Buffer.from(value).toString("base64"));
    expect(statSync(dataFile("vault.key")).mode & 0o777).toBe(0o600);
    expect(statSync(dataFile("vault.json")).mode & 0o777).toBe(0o600);
  });

  it("drops one trailing newline from stdin, warns of a value too short to mask, refuses an empty one", async () => {
    const { agentd } = project();
    const [multi, short, empty] = await Promise.all([
      agentd(["secrets", "set", "multi"], { stdin: "line one\nline two\n\n" }),
      agentd(["secrets", "set", "pin"], { stdin: "123" }),
      agentd(["secrets", "set", "empty"], { stdin: "\n" }),
    ]);
    expect(multi.code).toBe(0);
    expect(short.code).toBe(0);
    expect(short.stderr).toContain("warning: pin is shorter than 4 characters; such values are not masked");
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("no value given for empty; nothing was stored");
    const [got, listed] = await Promise.all([
      agentd(["secrets", "get", "multi"]),
      agentd(["secrets", "list", "--json"]),
    ]);
    expect(got.stdout).toBe("line one\nline two\n\n");
    expect(listed.stdout).toBe('{"secrets":["multi","pin"]}\n');
  });

  it("refuses a value on the command line with exit 2, without printing it back", async () => {
    const { agentd } = project();
    const results = await Promise.all(
      [["hunter2-on-argv"], ["--value=hunter2-on-argv"]].map((extra) =>
        agentd(["secrets", "set", "token", ...extra], { stdin: "from-stdin" }),
      ),
    );
    for (const result of results) {
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("error USAGE: agentd secrets set takes only the secret's name");
      expect(result.stderr).toContain("pipe it on stdin");
      expect(result.stdout + result.stderr).not.toContain("hunter2");
    }
    expect((await agentd(["secrets", "list", "--json"])).stdout).toBe('{"secrets":[]}\n');
  });

  it("rejects invalid names and removing a name the vault does not hold", async () => {
    const { agentd } = project();
    const [invalid, removed] = await Promise.all([
      agentd(["secrets", "set", "no spaces"], { stdin: "value" }),
      agentd(["secrets", "rm", "ghost"]),
    ]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('"no spaces" is not a valid secret name');
    expect(removed.code).toBe(1);
    expect(removed.stderr).toContain('error SECRET_NOT_FOUND: secret "ghost" is not in the file vault');
  });
});

/** util-linux `script` gives the CLI a real terminal; without it the prompt test is skipped. */
const hasScript =
  process.platform === "linux" && spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0;

describe("agentd secrets set on a terminal", SLOW, () => {
  it.skipIf(!hasScript)("prompts without echoing what is typed", async () => {
    const { directory, agentd } = project();
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(AGENTD_MAIN)} secrets set typed_token`;
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      cwd: directory,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    let typed = false;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      screen += chunk;
      if (!typed && screen.includes("value for typed_token: ")) {
        typed = true;
        child.stdin.write("typed-on-the-keyboard\r");
      }
    });
    const [code] = (await once(child, "exit")) as [number | null];
    expect(code).toBe(0);
    expect(screen).toContain("stored typed_token in the file vault");
    expect(screen).not.toContain("typed-on-the-keyboard");
    expect((await agentd(["secrets", "get", "typed_token"])).stdout).toBe("typed-on-the-keyboard\n");
  });
});

describe("agentd secrets with other backends", SLOW, () => {
  it("reads the env backend but refuses to change it, naming the variable to set", async () => {
    const { directory, agentd } = project();
    writeFileSync(path.join(directory, "env.yaml"), "vault: { backend: env }\n");
    const environment = { AGENTD_SECRET_DEPLOY_KEY: "from-the-environment" };
    // The env vault changes nothing: every call at once.
    const [get, list, ...refusals] = await Promise.all([
      agentd(["--config", "env.yaml", "secrets", "get", "deploy_key"], { environment }),
      agentd(["--config", "env.yaml", "--json", "secrets", "list"], { environment }),
      agentd(["--config", "env.yaml", "secrets", "set", "deploy_key"], { stdin: "x", environment }),
      agentd(["--config", "env.yaml", "secrets", "rm", "deploy_key"], { stdin: "x", environment }),
    ]);
    expect(get).toMatchObject({ code: 0, stdout: "from-the-environment\n" });
    expect(JSON.parse(list.stdout)).toEqual({ secrets: ["deploy_key"] });
    expect(refusals).toHaveLength(2);
    for (const result of refusals) {
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("error VAULT_UNAVAILABLE");
      expect(result.stderr).toContain("the env vault is read-only");
      expect(result.stderr).toContain("AGENTD_SECRET_DEPLOY_KEY");
    }
  });

  it("says the keychain is unavailable and what to use instead, and exits (where no keychain runs)", async () => {
    const { directory, agentd } = project();
    writeFileSync(
      path.join(directory, "keychain.yaml"),
      "vault: { backend: keychain, service: agentd-cli-test }\n",
    );
    const set = await agentd(["--config", "keychain.yaml", "secrets", "set", "probe"], { stdin: "v4lue" });
    if (set.code === 0) {
      // A machine with a working keychain: clean up what the test stored.
      expect((await agentd(["--config", "keychain.yaml", "secrets", "rm", "probe"])).code).toBe(0);
      return;
    }
    expect(set.code).toBe(1);
    expect(set.stderr).toMatch(/^error VAULT_UNAVAILABLE: .*the OS keychain is not available here/);
    expect(set.stderr).toContain("use vault.backend: file");
    expect(set.stderr).toContain("or env");
    const list = await agentd(["--config", "keychain.yaml", "secrets", "list"]);
    expect(list.code).toBe(1);
    expect(list.stderr).toContain("error VAULT_UNAVAILABLE");
  });
});
