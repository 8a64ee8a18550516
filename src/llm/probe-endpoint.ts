import { z } from "zod";
import { withPlainAnswerLimit } from "./plain-answer-limit.js";
import { missingModelHint, unreachableHint } from "./unreachable-hint.js";

/** What a quick look at the model server found. */
export type EndpointProbe =
  | { state: "ready"; endpoint: string; model: string }
  | { state: "unreachable"; endpoint: string; model: string; problem: string; hint: string }
  | { state: "model_missing"; endpoint: string; model: string; available: string[]; hint: string };

export interface ProbeOptions {
  endpoint: string;
  model: string;
  apiKey?: string | undefined;
  signal: AbortSignal;
}

const ModelListSchema = z.object({ data: z.array(z.object({ id: z.string() })) });

/**
 * Asks the endpoint for its models (`GET <base_url>/models`), once, so a first start can say at
 * once whether the LLM answers. A server that answers but lists no models, or answers an error
 * (some proxies do not serve /models), counts as ready: only a silent server or a missing model
 * is reported.
 */
export async function probeEndpoint(options: ProbeOptions): Promise<EndpointProbe> {
  const { endpoint, model } = options;
  let response: Response;
  try {
    response = await fetch(`${endpoint.replace(/\/+$/, "")}/models`, {
      headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
      signal: options.signal,
    });
  } catch (error) {
    const problem = options.signal.aborted ? "no answer in time" : describeFetchError(error);
    return { state: "unreachable", endpoint, model, problem, hint: unreachableHint(endpoint, model) };
  }
  if (!response.ok) {
    await response.body?.cancel();
    return { state: "ready", endpoint, model };
  }
  // Read up to 4 MiB (plain-answer-limit.ts): a list without end held the start's memory until the probe's timeout.
  const listed = ModelListSchema.safeParse(
    await withPlainAnswerLimit(response)
      .json()
      .catch(() => undefined),
  );
  if (!listed.success || listed.data.data.length === 0) return { state: "ready", endpoint, model };
  const available = listed.data.data.map((entry) => entry.id);
  // Ollama lists `llama3.1:latest` for `llama3.1`.
  const found = available.some((id) => id === model || id === `${model}:latest`);
  if (found) return { state: "ready", endpoint, model };
  return { state: "model_missing", endpoint, model, available, hint: missingModelHint(endpoint, model) };
}

function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

/** The probe's verdict as the line a person reads at start-up; undefined when all is well. */
export function describeProbe(probe: EndpointProbe): string | undefined {
  if (probe.state === "ready") return undefined;
  if (probe.state === "unreachable") {
    return `the LLM endpoint ${probe.endpoint} does not answer (${probe.problem}): runs will fail until it does.\n  To fix: ${probe.hint}`;
  }
  const shown = probe.available.slice(0, 8).join(", ");
  return `the LLM endpoint ${probe.endpoint} answers but has no model "${probe.model}" (it has: ${shown}${probe.available.length > 8 ? ", …" : ""}).\n  To fix: ${probe.hint}`;
}
