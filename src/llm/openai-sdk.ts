import type * as OpenAiSdk from "openai";

let loaded: typeof OpenAiSdk | undefined;

/**
 * The `openai` SDK, imported on the first model call: it is the largest module agentd uses, and
 * neither the daemon's start nor `agentd run` before its first request should wait for it.
 */
export async function loadOpenAiSdk(): Promise<typeof OpenAiSdk> {
  loaded ??= await import("openai");
  return loaded;
}

/** The SDK once a call has loaded it; before that none of its errors can have been thrown. */
export function loadedOpenAiSdk(): typeof OpenAiSdk | undefined {
  return loaded;
}
