import { afterEach, beforeEach } from "vitest";
import { type ScriptedLlmServer, startScriptedLlmServer } from "./scripted-llm-server.js";

/**
 * A fresh scripted server for each test of the calling file (started in `beforeEach`, closed in
 * `afterEach`). Returns a stand-in that forwards to the current test's server, so helpers at the
 * top of a file can use it like the server itself.
 */
export function withScriptedLlmServer(): ScriptedLlmServer {
  let current: ScriptedLlmServer | undefined;
  beforeEach(async () => {
    current = await startScriptedLlmServer();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return new Proxy({} as ScriptedLlmServer, {
    get(_target, key) {
      if (!current) throw new Error("the scripted LLM server exists only while a test runs");
      const value: unknown = Reflect.get(current, key);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(current) : value;
    },
  });
}
