import { request } from "node:http";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import {
  concretePath,
  type DocumentedOperation,
  declaredStatuses,
  labelOf,
  operationsOf,
} from "../support/openapi-operations.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { textReply } from "../support/scripted-llm-server.js";

const scripted = useScriptedDaemon({
  reply: textReply("done"),
  agents: (project) => project.writeAgent("writer", { memory: "write" }),
});

/** A request a client might send a route, and what it is meant to provoke. */
interface Probe {
  why: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

interface ProbeAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

let operations: DocumentedOperation[] = [];
let values: Record<string, string> = {};
let readToken = "";

beforeAll(async () => {
  const { daemon } = scripted;
  const run = await startRun(daemon, "writer", "say done");
  await waitForRunEnd(daemon, run);
  values = { id: "writer", agent: "writer", run, name: "probe", scope: "team" };
  const created = await daemon.request("POST", "/tokens", { name: "reader", role: "read" });
  readToken = z.object({ token: z.string() }).parse(created.body).token;
  operations = operationsOf(await (await fetch(`${daemon.url}/openapi.json`)).json());
}, 60_000);

/**
 * Sends a probe as raw HTTP, headers exactly as given (a foreign Host, no content-type). An event
 * stream is closed once its headers came; an answer given before the whole body was sent (413)
 * stands even when the server then drops the rest.
 */
function send(probe: Probe): Promise<ProbeAnswer> {
  const url = new URL(scripted.daemon.url);
  return new Promise((resolve, reject) => {
    let answered = false;
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        method: probe.method,
        path: probe.path,
        headers: probe.headers,
        setHost: probe.headers["host"] === undefined,
        agent: false,
      },
      (response) => {
        answered = true;
        const answer = { status: response.statusCode ?? 0, headers: response.headers };
        if (String(response.headers["content-type"]).startsWith("text/event-stream")) {
          response.destroy();
          resolve({ ...answer, body: "" });
          return;
        }
        let body = "";
        response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
        response.on("end", () => resolve({ ...answer, body }));
        response.on("error", reject);
      },
    );
    outgoing.on("error", (error) => {
      if (!answered) reject(error);
    });
    outgoing.end(probe.body);
  });
}

/** Each probe's status, by operation: sent once, read by the tests that judge them. */
const probed = new Map<string, Promise<Array<[string, number]>>>();

function probeAnswers(documented: DocumentedOperation): Promise<Array<[string, number]>> {
  const label = labelOf(documented);
  let answers = probed.get(label);
  if (answers === undefined) {
    answers = (async () => {
      const statuses: Array<[string, number]> = [];
      for (const probe of probesOf(documented)) statuses.push([probe.why, (await send(probe)).status]);
      return statuses;
    })();
    probed.set(label, answers);
  }
  return answers;
}

async function answersOf(documented: DocumentedOperation): Promise<Set<number>> {
  return new Set((await probeAnswers(documented)).map(([, status]) => status));
}

/** The requests that reach each route's error answers: none is specific to one route. */
function probesOf(documented: DocumentedOperation): Probe[] {
  const { method, path, operation } = documented;
  const admin = { authorization: `Bearer ${scripted.daemon.token ?? ""}` };
  const base = { method: method.toUpperCase(), path: concretePath(path, values) };
  const takesBody = method !== "get";
  const json = { ...admin, "content-type": "application/json" };
  const probes: Probe[] = [
    {
      why: "as documented",
      ...base,
      headers: takesBody ? json : admin,
      ...(takesBody ? { body: "{}" } : {}),
    },
    { why: "without a token", ...base, headers: {} },
    { why: "with a read token", ...base, headers: { authorization: `Bearer ${readToken}` } },
    { why: "with a foreign Host", ...base, headers: { ...admin, host: "evil.example" } },
  ];
  if (takesBody) {
    probes.push(
      {
        why: "from a foreign origin",
        ...base,
        headers: { ...json, origin: "https://evil.example" },
        body: "{}",
      },
      { why: "with a text body", ...base, headers: { ...admin, "content-type": "text/plain" }, body: "x" },
      { why: "with malformed JSON", ...base, headers: json, body: "{" },
      { why: "with an unknown body field", ...base, headers: json, body: '{"no_such_field":1}' },
      {
        why: "with a body past the limit",
        ...base,
        headers: json,
        body: JSON.stringify({ task: "x".repeat(1_100_000) }),
      },
    );
  }
  for (const parameter of operation.parameters.filter((each) => each.in === "path")) {
    const path = concretePath(documented.path, { ...values, [parameter.name]: "no-such-thing" });
    probes.push({
      why: `with an unknown ${parameter.name}`,
      ...base,
      path,
      headers: takesBody ? json : admin,
    });
  }
  for (const parameter of operation.parameters.filter((each) => each.in === "query")) {
    for (const value of ["abc", "-1.5"]) {
      probes.push({
        why: `with ${parameter.name}=${value}`,
        ...base,
        path: `${base.path}?${parameter.name}=${encodeURIComponent(value)}`,
        headers: admin,
      });
    }
  }
  return probes;
}

describe("the OpenAPI document against the running daemon", { timeout: 60_000 }, () => {
  it("declares every status each route answers, to the requests any client may send", async () => {
    const undeclared: string[] = [];
    for (const documented of operations) {
      // The event stream answers headers and then streams: probed like the rest, closed at once.
      const declared = declaredStatuses(documented);
      for (const [why, status] of await probeAnswers(documented)) {
        if (!declared.includes(status)) {
          undeclared.push(`${labelOf(documented)} ${why}: ${status}, declares ${declared.join(" ")}`);
        }
      }
    }
    expect(undeclared).toEqual([]);
  });

  it("declares 401 and 403 where the route answers them, and nowhere else", async () => {
    const wrong: string[] = [];
    for (const documented of operations) {
      const declared = declaredStatuses(documented);
      const answers = await answersOf(documented);
      // The probes reach both wherever they can happen: a request without a token (401 on a token
      // route, on the login, on a webhook's unknown trigger), a read token on a route that needs
      // more and a foreign origin on a POST (403). A public route has no token to refuse.
      for (const status of [401, 403]) {
        if (declared.includes(status) !== answers.has(status)) {
          const role = documented.operation["x-agentd-role"];
          wrong.push(
            `${labelOf(documented)} (${role}): ${declared.includes(status) ? "declares" : "does not declare"} ${status}, answers ${[...answers].join(" ")}`,
          );
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("answers each success in the media type the document declares", async () => {
    const wrong: string[] = [];
    const admin = { authorization: `Bearer ${scripted.daemon.token ?? ""}` };
    for (const documented of operations.filter((operation) => operation.method === "get")) {
      const answer = await send({
        why: "as documented",
        method: "GET",
        path: concretePath(documented.path, { ...values, token: scripted.daemon.token ?? "" }),
        headers: admin,
      });
      const declared = documented.operation.responses[String(answer.status)];
      const contentType = String(answer.headers["content-type"] ?? "");
      const media = Object.keys(declared?.content ?? {});
      if (
        media.length === 0
          ? contentType !== "" && answer.body !== ""
          : !media.some((type) => sameMedia(type, contentType))
      ) {
        wrong.push(
          `${labelOf(documented)} ${answer.status}: ${contentType}, declares ${media.join(" ") || "no body"}`,
        );
      }
    }
    expect(wrong).toEqual([]);
  });

  it("answers 304 to If-None-Match where it sends an ETag, and declares it", async () => {
    const admin = { authorization: `Bearer ${scripted.daemon.token ?? ""}` };
    const checked: string[] = [];
    for (const documented of operations.filter((operation) => operation.method === "get")) {
      const path = concretePath(documented.path, values);
      const first = await send({ why: "", method: "GET", path, headers: admin });
      const etag = first.headers["etag"];
      if (typeof etag !== "string") continue;
      const again = await send({
        why: "",
        method: "GET",
        path,
        headers: { ...admin, "if-none-match": etag },
      });
      expect(again.status).toBe(304);
      expect(declaredStatuses(documented), labelOf(documented)).toContain(304);
      checked.push(labelOf(documented));
    }
    expect(checked).toContain("GET /agents");
  });

  it("declares as a number every query parameter the server reads as one", async () => {
    const admin = { authorization: `Bearer ${scripted.daemon.token ?? ""}` };
    const misdeclared: string[] = [];
    for (const documented of operations.filter((operation) => operation.method === "get")) {
      for (const parameter of documented.operation.parameters.filter((each) => each.in === "query")) {
        const { type, enum: choices } = parameter.schema;
        if (type !== "string" || choices !== undefined) continue;
        const path = concretePath(documented.path, values);
        const status = async (value: string) =>
          (await send({ why: "", method: "GET", path: `${path}?${parameter.name}=${value}`, headers: admin }))
            .status;
        // Refuses a word but takes a number: the parameter is a number, whatever the document says.
        if ((await status("abc")) === 400 && (await status("7")) !== 400) {
          misdeclared.push(`${labelOf(documented)} ?${parameter.name} is declared a string`);
        }
      }
    }
    expect(misdeclared).toEqual([]);
  });

  it("lets the /docs explorer send what each route needs: the token, and JSON bodies as JSON", () => {
    const wrong: string[] = [];
    for (const documented of operations) {
      const { operation } = documented;
      const tokenFree = operation["x-agentd-role"] === "public" || operation["x-agentd-role"] === "own";
      // The document's global security is the bearer token; a token-free route opts out with [].
      if (tokenFree !== (operation.security !== undefined && operation.security.length === 0)) {
        wrong.push(`${labelOf(documented)}: security ${JSON.stringify(operation.security)}`);
      }
      const media = Object.keys(operation.requestBody?.content ?? {});
      if (media.some((type) => type !== "application/json")) {
        wrong.push(`${labelOf(documented)}: body as ${media.join(" ")}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("declares no required field that its schemas leave undefined", () => {
    const undefinedRequired: string[] = [];
    const walk = (schema: unknown, where: string) => {
      if (typeof schema !== "object" || schema === null) return;
      const object = schema as Record<string, unknown>;
      if (Array.isArray(object["required"]) && object["type"] === "object") {
        const properties = Object.keys((object["properties"] ?? {}) as object);
        for (const name of object["required"] as string[])
          if (!properties.includes(name)) undefinedRequired.push(`${where}: ${name}`);
      }
      for (const [key, value] of Object.entries(object)) walk(value, `${where}.${key}`);
    };
    for (const documented of operations) walk(documented.operation, labelOf(documented));
    expect(undefinedRequired).toEqual([]);
  });
});

/** Whether a declared media type covers an answer's content-type: same type, and its parameters. */
function sameMedia(declared: string, contentType: string): boolean {
  const parts = (text: string) => text.split(";").map((part) => part.trim().toLowerCase());
  const [declaredType, ...declaredParameters] = parts(declared);
  const [type, ...parameters] = parts(contentType);
  return declaredType === type && declaredParameters.every((parameter) => parameters.includes(parameter));
}
