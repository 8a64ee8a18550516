import { once } from "node:events";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentd as agentdCli } from "../support/agentd-cli.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

/** Three secrets: one plain, one whose JSON form differs (quote, backslash), and the LLM key. */
const SECRETS = {
  alpha: "alpha-Secret-8d41c7f2",
  beta: 'be"ta\\Secret-3e9f10ab',
  openai: "sk-leaktest-5b7d2e9a61",
};
type SecretName = keyof typeof SECRETS;

/**
 * The forms a value takes: as-is, inside a JSON string, inside a JSON string that is itself inside
 * JSON (a tool's JSON output as the events, the API and the model requests carry it), and base64.
 */
function formsOf(value: string): Array<{ form: string; text: string }> {
  const escaped = JSON.stringify(value).slice(1, -1);
  return [
    { form: "plain", text: value },
    { form: "JSON-escaped", text: escaped },
    { form: "JSON-escaped twice", text: JSON.stringify(escaped).slice(1, -1) },
    { form: "base64", text: Buffer.from(value).toString("base64") },
  ];
}

const kit = useTestKit();

/** `agentd <args>` in `cwd` with `stdin` piped in: its exit code and stderr. */
async function agentd(cwd: string, args: string[], stdin: string) {
  const result = await agentdCli(args, { cwd, input: stdin });
  return { code: result.exitCode, stderr: result.stderr };
}

/** A GET of the daemon's API as its raw text (as a client receives it), failing on an error status. */
async function textOf(daemon: DaemonProcess, urlPath: string): Promise<string> {
  const response = await fetch(`${daemon.url}${urlPath}`, { headers: daemon.headers() });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${urlPath} answered ${response.status}: ${text}`);
  return text;
}

/** A local server that answers every request with its headers as JSON. */
async function startHeaderEcho(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({ headers: request.headers }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/echo`, server };
}

/** Every file under `folder`, as text, by path. */
function filesUnder(folder: string): Array<{ file: string; text: string }> {
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .map((relative) => path.join(folder, relative))
    .filter((file) => statSync(file).isFile())
    .map((file) => ({ file, text: readFileSync(file, "utf8") }));
}

/** `where: secret (form)` for every form of every value found in any haystack. */
function leaks(haystacks: Array<{ where: string; text: string }>, names: readonly SecretName[]): string[] {
  const found: string[] = [];
  for (const { where, text } of haystacks) {
    for (const name of names) {
      for (const { form, text: needle } of formsOf(SECRETS[name])) {
        if (text.includes(needle)) found.push(`${where}: ${name}, ${form}`);
      }
    }
  }
  return found;
}

describe("secret values never leave the tools", () => {
  it(
    "keeps vault values out of logs, files, the API and the model's messages, masked as [secret:name]",
    { timeout: 120_000 },
    async () => {
      const llm = await kit.scriptedLlm();
      const echo = await startHeaderEcho();
      kit.defer(() => void echo.server.close());
      const workspace = kit.project({ llmUrl: llm.url, config: { log: { level: "debug", pretty: false } } });
      const configText = readFileSync(workspace.configFile, "utf8");
      writeFileSync(
        workspace.configFile,
        configText.replace("api_key: test-key", 'api_key: "{{secret:openai}}"'),
      );
      for (const [name, value] of Object.entries(SECRETS)) {
        const set = await agentd(workspace.root, ["secrets", "set", name], value);
        expect(set, set.stderr).toMatchObject({ code: 0 });
      }
      const workdir = path.join(workspace.root, "workspace");
      mkdirSync(workdir);
      const tools = ["shell", "write_file", "read_file", "http_request"];
      workspace.writeAgent("leaky", {
        tools,
        secrets: ["alpha", "beta"],
        // HTTP calls wait for a human: the approvals API shows their arguments too.
        permissions: { allow: ["shell", "write_file", "read_file"], ask: ["http_request"] },
        workdir: "./workspace",
        // The header echo runs on this machine's loopback: listed, or the sandbox refuses it.
        sandbox: { network: [new URL(echo.url).host, "127.0.0.1:1"] },
      });
      const shell = (command: string) => toolCallReply({ name: "shell", arguments: { command } });
      llm.enqueue(
        shell("echo plain={{secret:alpha}}"),
        shell(`printf '{"k":"%s"}\\n' {{secret:beta}}`),
        shell("printf %s {{secret:alpha}} | base64; printf %s '{{secret:beta}}' | base64"),
        toolCallReply({
          name: "write_file",
          arguments: { path: "creds.txt", content: "alpha={{secret:alpha}}\nbeta={{secret:beta}}\n" },
        }),
        toolCallReply({ name: "read_file", arguments: { path: "creds.txt" } }),
        toolCallReply({
          name: "http_request",
          arguments: {
            method: "GET",
            url: echo.url,
            headers: { authorization: "Bearer {{secret:alpha}}", "x-beta": "{{secret:beta}}" },
          },
        }),
        // Nothing listens on port 1: the tool throws, and its error (URL included) is logged.
        toolCallReply({
          name: "http_request",
          arguments: { method: "GET", url: "http://127.0.0.1:1/{{secret:alpha}}/status" },
        }),
        textReply("All done."),
      );
      const daemon = await kit.daemon(workspace.configFile);
      const output = () => `${daemon.stdout()}\n${daemon.stderr()}`;

      const started = await daemon.request("POST", "/agents/leaky/runs", {
        task: "store the credentials, then read them back",
      });
      const { run } = started.body as { run: string };
      const approvals = await waitFor(async () => {
        const text = await textOf(daemon, "/approvals");
        return text.includes('"http_request"') ? text : undefined;
      }, "the HTTP call to ask for approval");
      expect(approvals).toContain("Bearer {{secret:alpha}}");
      const [pending] = (JSON.parse(approvals) as { approvals: Array<{ id: string }> }).approvals;
      await daemon.request("POST", `/approvals/${pending?.id ?? "none"}`, {
        decision: "approve",
        scope: "run",
      });
      const record = await waitFor(
        async () => {
          const current = JSON.parse(await textOf(daemon, `/runs/${run}`)) as { status: string };
          return ["completed", "failed", "stopped"].includes(current.status) ? current : undefined;
        },
        "the run to end",
        60_000,
      );
      expect(record).toMatchObject({ status: "completed", result: "All done." });

      // The tools really got the values: the agent's own file holds them.
      expect(readFileSync(path.join(workdir, "creds.txt"), "utf8")).toContain(`alpha=${SECRETS.alpha}`);
      const [first] = llm.chatRequests;
      expect(first?.headers.authorization).toBe(`Bearer ${SECRETS.openai}`);

      const events = await textOf(daemon, "/agents/leaky/events?after=0&limit=1000");
      const haystacks = [
        { where: "daemon stdout+stderr", text: output() },
        { where: "GET /runs/:run", text: await textOf(daemon, `/runs/${run}`) },
        { where: "GET /runs", text: await textOf(daemon, "/runs") },
        { where: "GET /agents/leaky/events", text: events },
        { where: "GET /runs/:run/events", text: await textOf(daemon, `/runs/${run}/events`) },
        { where: "GET /events", text: await textOf(daemon, "/events") },
        { where: "GET /agents/leaky", text: await textOf(daemon, "/agents/leaky") },
        { where: "GET /approvals while waiting", text: approvals },
        ...filesUnder(workspace.dataDirectory)
          .filter(({ file }) => !["vault.json", "vault.key"].includes(path.basename(file)))
          .map(({ file, text }) => ({ where: path.relative(workspace.root, file), text })),
        ...llm.requests.map((request, index) => {
          const { authorization, ...headers } = request.headers;
          void authorization;
          return {
            where: `model request ${index + 1}`,
            text: JSON.stringify({ headers, body: request.body }),
          };
        }),
      ];
      expect(leaks(haystacks, ["alpha", "beta", "openai"])).toEqual([]);
      const vaultFile = readFileSync(path.join(workspace.dataDirectory, "vault.json"), "utf8");
      expect(leaks([{ where: "vault.json", text: vaultFile }], ["alpha", "beta", "openai"])).toEqual([]);

      // Where a value would have been, the mask is.
      const observations = (
        JSON.parse(events) as { events: Array<{ type: string; data: { output?: string } }> }
      ).events
        .filter((event) => event.type === "observation")
        .map((event) => event.data.output ?? "");
      expect(observations).toHaveLength(7);
      const [plain, json, base64, , readBack, http, refused] = observations;
      expect(plain).toContain("plain=[secret:alpha]");
      expect(json).toContain('{"k":"[secret:beta]"}');
      expect(base64).toMatch(/\[secret:alpha\]\s+\[secret:beta\]/);
      expect(readBack).toContain("alpha=[secret:alpha]");
      expect(readBack).toContain("beta=[secret:beta]");
      expect(http).toContain('"authorization":"Bearer [secret:alpha]"');
      expect(http).toContain('"x-beta":"[secret:beta]"');
      expect(refused).toContain("127.0.0.1:1/[secret:alpha]/status");
      expect(output()).toContain("127.0.0.1:1/[secret:alpha]/status");
      // The model read the same masked outputs.
      const toolMessages = llm.chatRequests
        .flatMap((request) => request.body?.messages ?? [])
        .filter((message) => message.role === "tool")
        .map((message) => String(message.content))
        .join("\n");
      for (const output of observations) expect(toolMessages).toContain(output.slice(0, 40));
    },
  );
});
