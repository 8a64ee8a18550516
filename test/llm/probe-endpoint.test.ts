import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { describeProbe, probeEndpoint } from "../../src/llm/probe-endpoint.js";
import { classifyLlmError } from "../../src/llm/llm-error.js";
import { APIConnectionError } from "openai";
import { closedPort } from "../support/closed-port.js";

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A model server on loopback that lists `models` at /v1/models. */
async function serveModels(models: string[]): Promise<string> {
  server = createServer((_request, response) => {
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({ object: "list", data: models.map((id) => ({ id, object: "model" })) }));
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

const signal = () => AbortSignal.timeout(5_000);

describe("the start-up look at the model server", () => {
  it("says the endpoint does not answer, and the one thing to do", async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}/v1`;
    const probe = await probeEndpoint({ endpoint, model: "llama3.1", signal: signal() });
    expect(probe.state).toBe("unreachable");
    const text = describeProbe(probe) ?? "";
    expect(text).toContain(`${endpoint} does not answer`);
    expect(text).toContain("copy config.example.yaml to config.yaml and set llm.base_url and llm.model");
  });

  it("names Ollama and the model to pull for the local default endpoint", async () => {
    const probe = await probeEndpoint({
      endpoint: "http://127.0.0.1:11434/v1",
      model: "llama3.1",
      signal: AbortSignal.timeout(1),
    });
    // Whether or not an Ollama runs here, the hint for this endpoint is Ollama's.
    if (probe.state === "unreachable") expect(probe.hint).toContain("ollama pull llama3.1");
  });

  it("says when the server answers but lacks the model, and is quiet when it has it", async () => {
    const endpoint = await serveModels(["qwen2.5:latest", "llama3.1:latest"]);
    const missing = await probeEndpoint({ endpoint, model: "mistral", signal: signal() });
    expect(describeProbe(missing)).toMatch(
      /has no model "mistral" \(it has: qwen2\.5:latest, llama3\.1:latest\)/,
    );
    const present = await probeEndpoint({ endpoint, model: "llama3.1", signal: signal() });
    expect(describeProbe(present)).toBeUndefined();
  });
});

describe("a model list without end", () => {
  it("is read up to 4 MiB, the server counted as answering, instead of until the probe's timeout", async () => {
    let sent = 0;
    const block = Buffer.from(`{"id":"${"m".repeat(1000)}","object":"model"},`.repeat(256));
    server = createServer((_request, response) => {
      response.setHeader("content-type", "application/json");
      response.write('{"object":"list","data":[');
      const pump = () => {
        while (!response.destroyed) {
          sent += block.length;
          if (!response.write(block)) return;
        }
      };
      response.on("drain", pump);
      pump();
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const probe = await probeEndpoint({ endpoint, model: "llama3.1", signal: AbortSignal.timeout(20_000) });
    server.closeAllConnections();

    expect(probe.state).toBe("ready");
    // The socket's buffers past the 4 MiB read, not what 20 s of reading takes.
    expect(sent).toBeLessThan(32 * 1024 * 1024);
  });
});

describe("LLM_NETWORK", () => {
  it("carries the same hint as the start-up warning", () => {
    const error = classifyLlmError(new APIConnectionError({ message: "Connection error." }), {
      endpoint: "http://127.0.0.1:11434/v1",
      model: "llama3.1",
    });
    expect(error.code).toBe("LLM_NETWORK");
    expect(error.hint).toContain("ollama pull llama3.1");
    expect(error.hint).toContain("copy config.example.yaml to config.yaml");
  });
});
