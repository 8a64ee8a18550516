import { mkdirSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import pg from "pg";
import { operationsOf } from "../support/openapi-operations.js";
import { startOtlpReceiver } from "../support/otlp-receiver.js";
import { postgresMissingReason, startPostgres } from "../support/postgres-server.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { recordingReceiver } from "../support/recording-receiver.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const SECRET = "chan-Secret-5e0c9a71d3";
const MODEL_KEY = "sk-chan-model-7b2e4f90aa";

/** The value and the simple transformations of it a program writes without meaning to hide it. */
const FORMS = {
  plain: SECRET,
  upper: SECRET.toUpperCase(),
  lower: SECRET.toLowerCase(),
  base64: Buffer.from(SECRET).toString("base64"),
  hex: Buffer.from(SECRET).toString("hex"),
};

const kit = useTestKit();

/** Every file under `folder` (none when it does not exist), as text, by path. */
function filesUnder(folder: string): Array<{ where: string; text: string }> {
  if (statSync(folder, { throwIfNoEntry: false }) === undefined) return [];
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .map((relative) => path.join(folder, relative))
    .filter((file) => statSync(file).isFile())
    .map((file) => ({ where: file, text: readFileSync(file, "latin1") }));
}

/** A GET's status and as much of its body as came within two seconds (a stream never ends). */
async function readGet(base: string, url: string, token: string): Promise<{ where: string; text: string }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 2_000);
  let text = "";
  let status = 0;
  try {
    const response = await fetch(`${base}${url}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: controller.signal,
    });
    status = response.status;
    const decoder = new TextDecoder();
    for await (const chunk of response.body ?? [])
      text += decoder.decode(chunk as Uint8Array, { stream: true });
  } catch {
    // The stream was cut: what came is what is searched.
  } finally {
    clearTimeout(timer);
  }
  return { where: `GET ${url} (${status})`, text };
}

function leaksIn(haystacks: Array<{ where: string; text: string }>): string[] {
  const found: string[] = [];
  for (const { where, text } of haystacks) {
    for (const [form, needle] of Object.entries(FORMS)) {
      if (text.includes(needle)) found.push(`${where}: ${form}`);
    }
  }
  return found;
}

/** Every row of every table of the database at `url`, as JSON text, by table. */
async function rowsOf(url: string): Promise<Array<{ where: string; text: string }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ schema: string; name: string }>(
      "SELECT table_schema AS schema, table_name AS name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
    );
    const found: Array<{ where: string; text: string }> = [];
    for (const { schema, name } of tables.rows) {
      const rows = await client.query(`SELECT * FROM "${schema}"."${name}"`);
      found.push({ where: `table ${schema}.${name}`, text: JSON.stringify(rows.rows) });
    }
    return found;
  } finally {
    await client.end();
  }
}

const missingPostgres = postgresMissingReason();

describe("every channel a run's bytes leave the daemon by", () => {
  it.each([
    { store: "files" as const },
    ...(missingPostgres === undefined ? [{ store: "postgres" as const }] : []),
  ])(
    "holds no vault value after an agent used it in every tool, a hook, a delivery, memory and a sub-agent ($store)",
    { timeout: 180_000 },
    async ({ store }) => {
      let databaseUrl: string | undefined;
      if (store === "postgres") {
        const postgres = await startPostgres();
        kit.defer(() => postgres.stop());
        databaseUrl = await postgres.createDatabase("channels");
      }
      const otlp = await startOtlpReceiver();
      kit.defer(() => otlp.close());
      const hook = await recordingReceiver(kit);
      const { llm, project } = await kit.scriptedProject(undefined, {
        config: {
          log: { level: "debug", pretty: false },
          resume: true,
          ...(databaseUrl === undefined ? {} : { store: { backend: "postgres", url: databaseUrl } }),
          telemetry: { traces: { endpoint: otlp.url, content: true } },
          hooks: {
            // A file per call: the sandbox keeps a file a hook command names read-only.
            before_tool: [{ command: 'mkdir -p hooks && cat > "hooks/before-$(date +%s%N)"' }],
            after_tool: [{ command: 'mkdir -p hooks && cat > "hooks/after-$(date +%s%N)"' }],
            on_run_end: [{ command: 'mkdir -p hooks && cat > "hooks/end-$(date +%s%N)"' }],
          },
          deliveries: {
            targets: {
              hook: {
                to: "webhook",
                url: `${hook.url}/deliver`,
                secret: `whsec_${Buffer.from("webhook-signing-key-01").toString("base64")}`,
                when: ["always", "agent"],
              },
            },
          },
        },
      });
      const set = await agentd(["secrets", "set", "alpha"], { cwd: project.root, input: SECRET });
      expect(set.exitCode, set.stderr).toBe(0);
      const workdir = path.join(project.root, "work");
      mkdirSync(workdir);
      project.writeAgent("helper", { description: "Helps", workdir: "./work" });
      project.writeAgent("leaky", {
        tools: ["shell", "write_file", "read_file", "http_request"],
        agents: ["helper"],
        secrets: ["alpha"],
        memory: "write",
        permissions: { allow: ["shell", "write_file", "read_file", "http_request"] },
        workdir: "./work",
        sandbox: { network: ["127.0.0.1:1"] },
        deliver: ["hook", { to: "file", path: "delivered.txt", when: ["always", "agent"] }],
      });
      const call = (name: string, args: Record<string, unknown>) => toolCallReply({ name, arguments: args });
      llm.enqueue(
        call("shell", { command: "echo plain={{secret:alpha}}" }),
        call("shell", { command: "echo {{secret:alpha}} >&2; exit 3" }),
        call("write_file", { path: "creds.txt", content: "alpha={{secret:alpha}}\n" }),
        call("read_file", { path: "creds.txt" }),
        call("http_request", { method: "GET", url: "http://127.0.0.1:1/{{secret:alpha}}" }),
        call("notify", { message: "the key is {{secret:alpha}}" }),
        call("memory_add", { text: "key {{secret:alpha}}" }),
        call("agent__helper", { task: "remember {{secret:alpha}}" }),
        textReply("helper done"),
        textReply("All done."),
      );
      const daemon = await kit.daemon(project.configFile, { environment: { OTEL_BSP_SCHEDULE_DELAY: "50" } });
      const run = await startRun(daemon, "leaky", "use the key");
      const record = await waitForRunEnd(daemon, run, 90_000);
      expect(record.status).toBe("completed");
      // The tools got the value.
      expect(readFileSync(path.join(workdir, "creds.txt"), "utf8")).toContain(SECRET);
      const settled = await waitFor(async () => {
        const listed = (await daemon.request("GET", "/deliveries")).body as {
          deliveries: Array<{ status: string }>;
        };
        return listed.deliveries.length >= 4 && listed.deliveries.every((item) => item.status !== "pending")
          ? listed.deliveries
          : undefined;
      }, "the deliveries to settle");
      expect(settled.map((item) => item.status)).toEqual(["sent", "sent", "sent", "sent"]);
      await waitFor(() => otlp.spans.some((span) => span.name.startsWith("invoke_agent")), "the run's spans");

      const token = daemon.token ?? "";
      const document: unknown = await (await fetch(`${daemon.url}/openapi.json`)).json();
      const deliveries = (await daemon.request("GET", "/deliveries")).body as {
        deliveries: Array<{ id: string }>;
      };
      const ids = ["leaky", "helper", run, ...deliveries.deliveries.map((delivery) => delivery.id)];
      const replies: Array<{ where: string; text: string }> = [];
      for (const { method, path: template } of operationsOf(document)) {
        if (method !== "get") continue;
        const fills = template.includes("{") ? ids : [""];
        for (const fill of fills) {
          let url = template.replace(/\{[^}]+\}/g, fill);
          if (url.includes("/stream")) url += "?after=0&wait=0";
          replies.push(await readGet(daemon.url, url, token));
        }
      }
      for (const url of ["/", "/metrics", `/runs/${run}/events?after=0&limit=1000`]) {
        const response = await fetch(`${daemon.url}${url}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        replies.push({ where: `GET ${url}`, text: await response.text() });
      }
      const haystacks = [
        ...replies,
        { where: "daemon output", text: `${daemon.stdout()}\n${daemon.stderr()}` },
        ...filesUnder(project.dataDirectory).filter(
          ({ where }) => !["vault.json", "vault.key"].includes(path.basename(where)),
        ),
        ...filesUnder(workdir).filter(({ where }) => path.basename(where) !== "creds.txt"),
        ...(databaseUrl === undefined ? [] : await rowsOf(databaseUrl)),
        ...hook.received.map((request) => ({ where: `webhook ${request.path}`, text: request.body })),
        { where: "OTLP bodies", text: otlp.bodies.map((body) => body.toString("latin1")).join("\n") },
        ...llm.requests.map((request, index) => ({
          where: `model request ${index + 1}`,
          text: JSON.stringify(request.body ?? null),
        })),
      ];
      expect(haystacks.length).toBeGreaterThan(30);
      // The value went where the channels could have shown it: each shows the mask instead.
      const masked = (where: string) =>
        haystacks.filter(
          (haystack) => haystack.where.includes(where) && haystack.text.includes("[secret:alpha]"),
        );
      for (const where of [
        "/agents/leaky/events/stream",
        "GET /deliveries",
        "daemon output",
        "delivered.txt",
        "webhook",
        "OTLP",
        "hooks/after-",
        "model request",
      ]) {
        expect(masked(where).length, where).toBeGreaterThan(0);
      }
      // The helper's model was given the task with the mask where the value was.
      expect(
        llm.chatRequests.some((request) => JSON.stringify(request.body).includes("remember [secret:alpha]")),
      ).toBe(true);
      expect(leaksIn(haystacks)).toEqual([]);
    },
  );

  it(
    "masks the model key and the secrets of the request when the model's error echoes both (traces without content)",
    { timeout: 120_000 },
    async () => {
      const otlp = await startOtlpReceiver();
      kit.defer(() => otlp.close());
      const llm = await kit.scriptedLlm();
      const project = kit.project({
        llmUrl: llm.url,
        config: {
          log: { level: "debug", pretty: false },
          telemetry: { traces: { endpoint: otlp.url, content: false } },
          llm: { base_url: llm.url, api_key: "{{secret:openai}}", model: "scripted" },
        },
      });
      for (const [name, value] of [
        ["alpha", SECRET],
        ["openai", MODEL_KEY],
      ]) {
        const set = await agentd(["secrets", "set", name as string], { cwd: project.root, input: value });
        expect(set.exitCode, set.stderr).toBe(0);
      }
      mkdirSync(path.join(project.root, "work"));
      project.writeAgent("echoed", {
        tools: ["shell"],
        secrets: ["alpha"],
        permissions: { allow: ["shell"] },
        workdir: "./work",
      });
      // The first answer calls the shell; the second request is refused with all it carried echoed.
      llm.enqueue(
        toolCallReply({ name: "shell", arguments: { command: "echo {{secret:alpha}}" } }),
        (request) => ({
          type: "http_error",
          status: 400,
          message: `Incorrect API key provided: ${String(request.headers.authorization)}; request: ${JSON.stringify(request.body)}`,
        }),
      );
      const daemon = await kit.daemon(project.configFile, { environment: { OTEL_BSP_SCHEDULE_DELAY: "50" } });
      const run = await startRun(daemon, "echoed", "use the key");
      const record = await waitForRunEnd(daemon, run, 90_000);
      expect(record.status).toBe("failed");
      expect(llm.chatRequests[1]?.headers.authorization).toBe(`Bearer ${MODEL_KEY}`);
      await waitFor(() => otlp.spans.some((span) => span.name.startsWith("invoke_agent")), "the run's spans");
      const token = daemon.token ?? "";
      const haystacks = [
        await readGet(daemon.url, `/runs/${run}`, token),
        await readGet(daemon.url, `/runs/${run}/events`, token),
        await readGet(daemon.url, "/runs", token),
        await readGet(daemon.url, "/agents/echoed", token),
        await readGet(daemon.url, "/metrics", token),
        { where: "daemon output", text: `${daemon.stdout()}\n${daemon.stderr()}` },
        ...filesUnder(project.dataDirectory).filter(
          ({ where }) => !["vault.json", "vault.key"].includes(path.basename(where)),
        ),
        { where: "OTLP bodies", text: otlp.bodies.map((body) => body.toString("latin1")).join("\n") },
      ];
      const modelKeyForms = [MODEL_KEY, MODEL_KEY.toUpperCase(), Buffer.from(MODEL_KEY).toString("base64")];
      const found = leaksIn(haystacks).concat(
        haystacks
          .filter(({ text }) => modelKeyForms.some((form) => text.includes(form)))
          .map(({ where }) => `${where}: model key`),
      );
      expect(found).toEqual([]);
      // The error itself is kept, masked.
      expect(JSON.stringify(record)).toContain("Incorrect API key provided: Bearer [secret:openai]");
    },
  );
});
