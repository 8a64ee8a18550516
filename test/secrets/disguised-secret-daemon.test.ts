import { mkdirSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

/** A value with a space, both quotes, `/`, `+` and a character outside ASCII. */
const SECRET = "Tok wörd/+\"x'9f-Secret-71c3";

/**
 * The value and the forms a reader gets back from a disguise in one trivial step (NFC, lowercase,
 * quotes dropped): none may show anywhere outside the tools.
 */
const NEEDLES = [SECRET, SECRET.toLowerCase(), "9f-secret-71c3", "tok wörd/", "tok wo\u0308rd"];

const kit = useTestKit();

/** A GET of the daemon's API as its raw text. */
async function textOf(daemon: DaemonProcess, urlPath: string): Promise<string> {
  const response = await fetch(`${daemon.url}${urlPath}`, { headers: daemon.headers() });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${urlPath} answered ${response.status}: ${text}`);
  return text;
}

/** Every file under `folder` as text, but the vault's own. */
function filesUnder(folder: string): Array<{ where: string; text: string }> {
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .map((relative) => path.join(folder, relative))
    .filter((file) => statSync(file).isFile() && !["vault.json", "vault.key"].includes(path.basename(file)))
    .map((file) => ({ where: path.relative(folder, file), text: readFileSync(file, "utf8") }));
}

/** `where: needle` for each needle found in a haystack, after undoing JSON string escapes. */
function leaks(haystacks: Array<{ where: string; text: string }>): string[] {
  const found: string[] = [];
  for (const { where, text } of haystacks) {
    // JSON files and bodies escape the value's quote; a reader unescapes it.
    const unescaped = text.replace(/\\u([0-9a-fA-F]{4})/g, (_match, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
    const views = [text, unescaped, unescaped.replace(/\\(.)/g, "$1")].map((view) =>
      view.normalize("NFC").toLowerCase(),
    );
    for (const needle of NEEDLES) {
      const lower = needle.toLowerCase();
      if (views.some((view) => view.includes(lower) || view.replace(/['"]/g, "").includes(lower))) {
        found.push(`${where}: ${needle}`);
      }
    }
  }
  return found;
}

const shell = (command: string) => toolCallReply({ name: "shell", arguments: { command } });
const python = (expression: string, imports = "") =>
  shell(
    `printf %s {{secret:k}} | python3 -c 'import sys${imports}; s = sys.stdin.read(); print(${expression})'`,
  );

describe("a secret in disguise, through the real daemon", () => {
  it(
    "keeps every form out of the model's requests, data_dir (events, checkpoints), the log and the API",
    { timeout: 180_000 },
    async () => {
      const llm = await kit.scriptedLlm();
      const workspace = kit.project({ llmUrl: llm.url, config: { log: { level: "debug", pretty: false } } });
      const set = await agentd(["secrets", "set", "k"], { cwd: workspace.root, input: SECRET });
      expect(set.exitCode, set.stderr).toBe(0);
      mkdirSync(path.join(workspace.root, "work"));
      workspace.writeAgent("disguiser", {
        tools: ["shell", "write_file"],
        secrets: ["k"],
        permissions: { allow: ["shell", "write_file"] },
        workdir: "./work",
        // The checkpoint of a resumable run stays in data_dir while it runs.
        resume: true,
        // A hook that quotes the value with %q on its stderr, which becomes a hook event.
        hooks: { after_tool: `test -f s.txt && printf '%q' "$(cat s.txt)" >&2; exit 1` },
      });
      const forms = [
        shell("printf '%q\\n' {{secret:k}}"),
        shell(`X={{secret:k}} bash -xc 'true "$X"'`),
        shell("printf '%s\\n' {{secret:k}} | grep --color=always 'rd/+'"),
        python("repr(s)"),
        python('"\\"" + s.replace("\\"", "\\"\\"") + "\\""'),
        python("html.escape(s)", ", html"),
        python('urllib.parse.quote(s, safe="")', ", urllib.parse"),
        python('"".join("\\\\u%04x" % ord(c) for c in s)'),
        shell("printf %s {{secret:k}} | base32"),
        python('unicodedata.normalize("NFD", s)', ", unicodedata"),
        python("s.upper()"),
        toolCallReply({ name: "write_file", arguments: { path: "s.txt", content: "{{secret:k}}" } }),
      ];
      // Then the model writes the value itself, in its text and a tool argument, and the run waits
      // on its next model call: its checkpoint is on disk.
      const ownWords = toolCallReply(
        { name: "shell", arguments: { command: `true '${SECRET.replace(/'/g, "'\\''")}'` } },
        { text: `I will use ${SECRET} now.` },
      );
      llm.enqueue(...forms, ownWords, { type: "hang" });
      const daemon = await kit.daemon(workspace.configFile);

      const started = await daemon.request("POST", "/agents/disguiser/runs", { task: "show the secret" });
      const { run } = started.body as { run: string };
      await llm.waitForChatRequests(forms.length + 2, 90_000);
      const checkpoint = path.join(workspace.dataDirectory, "checkpoints", `${run}.json`);
      await waitFor(() => {
        try {
          return readFileSync(checkpoint, "utf8").includes("I will use") ? true : undefined;
        } catch {
          return undefined;
        }
      }, "the checkpoint of the model's own words");

      const events = await textOf(daemon, `/runs/${run}/events`);
      const observations = (
        JSON.parse(events) as { events: Array<{ type: string; data: { output?: string } }> }
      ).events
        .filter((event) => event.type === "observation")
        .map((event) => event.data.output ?? "");
      // Every form was printed, and masked.
      for (const output of observations.slice(0, forms.length - 1)) expect(output).toContain("[secret:k]");
      expect(events).toMatch(/"type":"hook".*\[secret:k\]/);
      expect(readFileSync(checkpoint, "utf8")).toContain("I will use [secret:k] now.");

      // The model's own words go back to it (it wrote them): its requests are searched up to them.
      const requestsBeforeOwnWords = llm.chatRequests.slice(0, forms.length + 1);
      const haystacks = [
        { where: "daemon stdout+stderr", text: `${daemon.stdout()}\n${daemon.stderr()}` },
        { where: "GET /runs/:run", text: await textOf(daemon, `/runs/${run}`) },
        { where: "GET /runs/:run/events", text: events },
        {
          where: "GET /agents/disguiser/events",
          text: await textOf(daemon, "/agents/disguiser/events?limit=1000"),
        },
        { where: "GET /events", text: await textOf(daemon, "/events") },
        ...filesUnder(workspace.dataDirectory),
        ...requestsBeforeOwnWords.map((request, index) => ({
          where: `model request ${index + 1}`,
          text: JSON.stringify(request.body),
        })),
        ...llm.chatRequests.map((request, index) => ({
          where: `tool results in model request ${index + 1}`,
          text: JSON.stringify((request.body?.messages ?? []).filter((message) => message.role === "tool")),
        })),
      ];
      expect(leaks(haystacks)).toEqual([]);
      await daemon.request("POST", `/runs/${run}/stop`);
    },
  );
});
