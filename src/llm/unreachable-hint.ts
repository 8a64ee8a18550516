/** The endpoint agentd uses when the config names none: a local Ollama. */
export const LOCAL_OLLAMA_URL = "http://127.0.0.1:11434/v1";

/**
 * The one thing to do when the model server does not answer, said the same way at start-up and in
 * every LLM_NETWORK error: start Ollama and pull the model when the endpoint is the local default,
 * else point the config at a server that answers.
 */
export function unreachableHint(endpoint: string, model: string): string {
  const configure =
    "copy config.example.yaml to config.yaml and set llm.base_url and llm.model (and llm.api_key) to a server that answers";
  if (isLocalOllama(endpoint)) {
    return `start Ollama (ollama serve) and run \`ollama pull ${model}\`, or ${configure}`;
  }
  return `check that ${endpoint} is up, or ${configure}`;
}

/** The hint for a server that answers but does not have the model. */
export function missingModelHint(endpoint: string, model: string): string {
  if (isLocalOllama(endpoint)) return `run \`ollama pull ${model}\`, or set llm.model to a model it has`;
  return "set llm.model (or the agent's model) to a model this endpoint serves";
}

function isLocalOllama(endpoint: string): boolean {
  try {
    const url = new URL(endpoint);
    return url.port === "11434" && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  } catch {
    return false;
  }
}
