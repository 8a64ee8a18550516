import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startRun } from "../daemon/api-shapes.js";
import { launchTestBrowser, type TestBrowser } from "../support/browser.js";
import {
  type DocumentedOperation,
  declaredStatuses,
  labelOf,
  operationsOf,
} from "../support/openapi-operations.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { toolCallReply } from "../support/scripted-llm-server.js";
import { waitFor } from "../support/wait-for.js";

// Every run of "writer" asks to write a file and waits for a person (again after each approval):
// a run stays in flight for the approval, the pause, the resume and the stop. "asker" asks a
// question (its one reply is queued before its run) and waits for the answer.
const scripted = useScriptedDaemon({
  reply: toolCallReply({ name: "write_file", arguments: { path: "note.txt", content: "x" } }),
  agents: (project) => {
    mkdirSync(path.join(project.root, "work"));
    project.writeAgent("writer", {
      workdir: "work/writer",
      tools: ["write_file"],
      permissions: { ask: ["write_file"] },
      memory: "write",
    });
    project.writeAgent("asker", { tools: ["ask_human"], memory: { mode: "write", scope: "team" } });
  },
});

let browser: TestBrowser | undefined;
let operations: DocumentedOperation[] = [];
/** What a person types into the path parameters: names of things that exist. */
let values: Record<string, string> = {};

beforeAll(async () => {
  const { daemon, llm } = scripted;
  llm.enqueue(toolCallReply({ name: "ask_human", arguments: { question: "which colour?" } }));
  await startRun(daemon, "asker", "ask");
  const question = await waitFor(async () => {
    const reply = await daemon.request("GET", "/questions");
    return (reply.body as { questions: Array<{ id: string }> }).questions[0]?.id;
  }, "asker's question");
  const run = await startRun(daemon, "writer", "write a note");
  values = { id: "writer", agent: "writer", run, name: "explorer", scope: "team", question };
  operations = operationsOf(await (await fetch(`${daemon.url}/openapi.json`)).json());
  browser = await launchTestBrowser(daemon.url);
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

/** The first pending approval of `run`, once it asks (a run asks again after each approval). */
function pendingApproval(run: string): Promise<string> {
  return waitFor(async () => {
    const reply = await scripted.daemon.request("GET", "/approvals");
    return (reply.body as { approvals: Array<{ id: string; run: string }> }).approvals.find(
      (each) => each.run === run,
    )?.id;
  }, `run ${run} to ask for its approval`);
}

/**
 * What a person types where the explorer's example would name nothing that exists: path
 * parameters, the login's token, a token to create (then revoked by name), the memory's current
 * version. Every other body is the explorer's own example, sent as it fills it in.
 */
async function inputsOf({ operation, path: route }: DocumentedOperation): Promise<{
  parameters: Record<string, string>;
  body?: string;
}> {
  const parameters: Record<string, string> = {};
  for (const parameter of operation.parameters.filter((each) => each.in === "path")) {
    parameters[parameter.name] = values[parameter.name] ?? parameter.name;
  }
  if (route === "/approvals/{id}") parameters["id"] = await pendingApproval(values["run"] ?? "");
  if (route === "/questions/{id}") parameters["id"] = values["question"] ?? "";
  if (route === "/auth/login") parameters["token"] = scripted.daemon.token ?? "";
  if (route === "/runs") Object.assign(parameters, { agent: "writer", limit: "5" });
  switch (operation.operationId) {
    case "createToken":
      return { parameters, body: JSON.stringify({ name: values["name"], role: "read" }) };
    case "answerQuestion":
      return { parameters, body: JSON.stringify({ answer: "blue" }) };
    case "putAgentMemory":
    case "putSharedMemory": {
      const current = await scripted.daemon.request(
        "GET",
        route.replace(/\{(\w+)\}/, (_m, name: string) => values[name] ?? name),
      );
      const { version } = z.object({ version: z.string() }).parse(current.body);
      return { parameters, body: JSON.stringify({ content: "- remembered\n", version }) };
    }
    default:
      return { parameters };
  }
}

/** A request as the explorer sends it: what is compared and what is sent. */
interface ExplorerRequest {
  url: string;
  method: string;
  authorization: string | null;
  contentType: string | null;
  body: string | null;
}

/**
 * Opens an operation of the explorer, clicks "Try it out", fills its parameters (and its body
 * when given: else the explorer's example stays) as a person types them, clicks Execute and
 * answers the request it sent, the network's answer and the status the explorer shows.
 */
async function tryItOut(
  page: Page,
  documented: DocumentedOperation,
  parameters: Record<string, string>,
  body?: string,
): Promise<{ sent: ExplorerRequest; status: number; shown: string }> {
  const block = page.locator(`[id$="-${documented.operation.operationId}"]`);
  await block.locator(".opblock-summary").first().click();
  await block.locator("button.try-out__btn").click();
  for (const [name, value] of Object.entries(parameters)) {
    await block.locator(`tr[data-param-name="${name}"] input`).fill(value);
  }
  if (body !== undefined) await block.locator("textarea.body-param__text").fill(body);
  const answered = page.waitForResponse((response) => !new URL(response.url()).pathname.startsWith("/docs"));
  await block.locator("button.execute").click();
  const response = await answered;
  const status = block.locator(".live-responses-table tbody tr.response .response-col_status").first();
  await status.waitFor();
  const request = response.request();
  return {
    sent: {
      url: request.url(),
      method: request.method(),
      authorization: await request.headerValue("authorization"),
      contentType: await request.headerValue("content-type"),
      body: request.postData(),
    },
    status: response.status(),
    shown: (await status.innerText()).trim(),
  };
}

/**
 * The explorer's own request builder (swagger-client's `buildRequest`, which its Execute button
 * calls), in a second explorer the page starts without rendering it: the request Try it out would
 * send for these inputs, with the explorer's example body where none is given.
 */
async function explorerRequest(
  page: Page,
  documented: DocumentedOperation,
  parameters: Record<string, string>,
  token: string,
  body?: string,
): Promise<ExplorerRequest> {
  return page.evaluate(
    async ({ operationId, method, path: route, parameters, token, body }) => {
      type System = {
        fn: {
          buildRequest(options: Record<string, unknown>): {
            url: string;
            method: string;
            headers: Record<string, string>;
            body?: string;
          };
          getSampleSchema(schema: unknown, type: string, options: Record<string, unknown>): string;
        };
      };
      const global = globalThis as unknown as {
        location: { href: string };
        explorer?: Promise<{ system: System; spec: Record<string, unknown> }>;
        SwaggerUIBundle: ((config: Record<string, unknown>) => System) & { presets: { apis: unknown } };
      };
      global.explorer ??= fetch("/docs/json")
        .then((answer) => answer.json() as Promise<Record<string, unknown>>)
        .then((spec) => ({
          spec,
          system: global.SwaggerUIBundle({
            spec,
            dom_id: null,
            presets: [global.SwaggerUIBundle.presets.apis],
          }),
        }));
      const { system, spec } = await global.explorer;
      const paths = spec["paths"] as Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>
      >;
      const media = paths[route]?.[method]?.requestBody?.content["application/json"];
      const requestBody =
        media === undefined
          ? undefined
          : (body ?? system.fn.getSampleSchema(media.schema, "application/json", { includeWriteOnly: true }));
      const built = system.fn.buildRequest({
        spec,
        operationId,
        parameters,
        server: "/",
        contextUrl: new URL("/docs/json", global.location.href).href,
        ...(requestBody === undefined ? {} : { requestContentType: "application/json", requestBody }),
        responseContentType: "*/*",
        securities: {
          authorized: {
            bearer: { name: "bearer", schema: { type: "http", scheme: "bearer" }, value: token },
          },
        },
      });
      const headers = Object.fromEntries(
        Object.entries(built.headers).map(([name, value]) => [name.toLowerCase(), value]),
      );
      return {
        url: new URL(built.url, global.location.href).href,
        method: built.method.toUpperCase(),
        authorization: headers["authorization"] ?? null,
        contentType: headers["content-type"] ?? null,
        body: built.body === undefined ? null : String(built.body),
      };
    },
    {
      operationId: documented.operation.operationId,
      method: documented.method,
      path: documented.path,
      parameters,
      token,
      ...(body === undefined ? {} : { body }),
    },
  );
}

/** Sends a built request from the page, as the explorer's fetch does; an event stream is cut after its headers. */
function sendFromPage(page: Page, request: ExplorerRequest): Promise<{ status: number; body: string }> {
  return page.evaluate(async ({ url, method, authorization, contentType, body }) => {
    const headers: Record<string, string> = {};
    if (authorization !== null) headers["authorization"] = authorization;
    if (contentType !== null) headers["content-type"] = contentType;
    const controller = new AbortController();
    const answer = await fetch(url, { method, headers, body, redirect: "manual", signal: controller.signal });
    if (String(answer.headers.get("content-type")).startsWith("text/event-stream")) {
      controller.abort();
      return { status: answer.status, body: "" };
    }
    // A redirect is opaque to a page: the login's 303 reads as status 0.
    return { status: answer.type === "opaqueredirect" ? 303 : answer.status, body: await answer.text() };
  }, request);
}

/** The routes that cannot answer a success to the explorer, and why. */
const NO_SUCCESS: Record<string, number> = {
  // Authenticated by the sender's signature over the body, which no explorer computes: the route
  // answers its 401 (it found the agent and checked), which is what a person trying it sees.
  "POST /hooks/{agent}/{name}": 401,
};

/**
 * One route of each request shape is driven through the explorer's page: no parameter, query
 * parameters, a path parameter and a JSON body, a path parameter and no body (the bare POST that
 * once got 415). Each click costs seconds of rendering on a busy machine, so every route is not:
 * the rest are sent as the explorer's own request builder builds them — the function its Execute
 * button calls — and the driven ones check that builder gives exactly what the page sent.
 */
const DRIVEN = ["getSession", "listRuns", "startRun", "pauseRun"];

describe("Try it out in /docs", { timeout: 120_000 }, () => {
  it("drives every route of the document: each answered a declared status and a success", async () => {
    if (!browser) throw new Error("no browser");
    const { page } = browser;
    const token = scripted.daemon.token ?? "";
    await page.goto("/docs/");
    await page.locator("button.authorize").first().click();
    await page.locator(".auth-container input").first().fill(token);
    await page.locator(".auth-btn-wrapper button.authorize").click();
    await page.locator("button.btn-done").click();

    const wrong: string[] = [];
    const driven: string[] = [];
    for (const documented of operations) {
      const label = labelOf(documented);
      const { operationId } = documented.operation;
      const { parameters, body } = await inputsOf(documented);
      const built = await explorerRequest(page, documented, parameters, token, body);
      let status: number;
      let answer = "";
      if (DRIVEN.includes(operationId)) {
        const tried = await tryItOut(page, documented, parameters, body);
        // The page's request, the explorer's builder's: the same, so what the builder sends is Try it out.
        expect({ ...tried.sent, body: tried.sent.body && JSON.parse(tried.sent.body) }, label).toEqual({
          ...built,
          body: built.body && JSON.parse(built.body),
        });
        if (tried.shown !== String(tried.status))
          wrong.push(`${label}: shows ${tried.shown} for ${tried.status}`);
        status = tried.status;
        driven.push(operationId);
      } else {
        ({ status, body: answer } = await sendFromPage(page, built));
      }
      const tokenFree = documented.operation.security?.length === 0;
      if (!declaredStatuses(documented).includes(status)) wrong.push(`${label}: ${status} is not declared`);
      if ((NO_SUCCESS[label] ?? "success") !== (status < 300 || status === 303 ? "success" : status)) {
        wrong.push(`${label}: ${status} ${answer}`);
      }
      if (!tokenFree && built.authorization !== `Bearer ${token}`)
        wrong.push(`${label}: built without the token`);
      if (built.body !== null && !/^application\/json/.test(built.contentType ?? "")) {
        wrong.push(`${label}: a body built as ${built.contentType}`);
      }
      if (built.body === null && built.contentType !== null)
        wrong.push(`${label}: no body, yet ${built.contentType}`);
    }
    expect(wrong, await browser.describe()).toEqual([]);
    expect(driven.sort()).toEqual([...DRIVEN].sort());
    expect(operations.length).toBeGreaterThan(30);
    // The browser logs the webhook's 401 (NO_SUCCESS) as a failed load; every status is checked above.
    expect(browser.consoleErrors.filter((error) => !error.includes("status of 401"))).toEqual([]);
  });
});
