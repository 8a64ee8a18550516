import { AgentdError } from "../errors/agentd-error.js";

/**
 * Parses a request's JSON body. An empty body is no body (POST /runs/:run/stop and friends carry
 * none). A `__proto__` key anywhere is refused: merged into an object it would change that
 * object's prototype. Failures are BAD_REQUEST errors the API answers with its usual body.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text, refusePrototypeKey);
  } catch (error) {
    if (error instanceof AgentdError) throw error;
    throw new AgentdError(
      "BAD_REQUEST",
      `the body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      { hint: "send a JSON object with content-type: application/json", cause: error },
    );
  }
}

function refusePrototypeKey(key: string, value: unknown): unknown {
  if (key === "__proto__") {
    throw new AgentdError("BAD_REQUEST", 'the body has a "__proto__" key, which the API refuses', {
      field: "__proto__",
      hint: "remove the key: no request field is named __proto__",
    });
  }
  return value;
}
