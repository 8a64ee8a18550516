import { afterAll, afterEach } from "vitest";
import { type DaemonProcess, type DaemonProcessOptions, startDaemonProcess } from "./daemon-process.js";
import { type ScriptedLlmServer, type ScriptedReply, startScriptedLlmServer } from "./scripted-llm-server.js";
import { createTempProject, type TempProject, type TempProjectOptions } from "./temp-project.js";

/** What a test file starts through the kit; everything is stopped or removed after the test (or the file). */
export interface TestKit {
  /** Runs `cleanup` when the kit cleans up, after the cleanups deferred later (last in, first out). */
  defer(cleanup: () => unknown): void;
  /** A scripted OpenAI-compatible server, closed after the test. */
  scriptedLlm(): Promise<ScriptedLlmServer>;
  /** A temp project (see {@link createTempProject}), removed after the test. */
  project(options?: TempProjectOptions): TempProject;
  /**
   * A scripted server answering `reply` by default, and a temp project whose `llm` points at it: the
   * set-up of the daemon's black-box tests. Both go away after the test.
   */
  scriptedProject(
    reply?: ScriptedReply,
    options?: Omit<TempProjectOptions, "llmUrl">,
  ): Promise<{ llm: ScriptedLlmServer; project: TempProject }>;
  /** The real daemon on this config file, killed with its children after the test. */
  daemon(configFile: string, options?: Omit<DaemonProcessOptions, "configFile">): Promise<DaemonProcess>;
}

/**
 * Registers the hook that undoes what was started; call once at the top of a test file. `"test"`:
 * after each test; `"file"`: after the file's last test, for one daemon that every test shares
 * (started in `beforeAll`).
 */
export function useTestKit(scope: "test" | "file" = "test"): TestKit {
  const cleanups: Array<() => unknown> = [];
  (scope === "test" ? afterEach : afterAll)(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const defer = (cleanup: () => unknown) => void cleanups.push(cleanup);
  const scriptedLlm = async () => {
    const llm = await startScriptedLlmServer();
    defer(() => llm.close());
    return llm;
  };
  const project = (options?: TempProjectOptions) => {
    const made = createTempProject(options);
    defer(() => made.remove());
    return made;
  };
  return {
    defer,
    scriptedLlm,
    project: (options) => project(options),
    scriptedProject: async (reply, options = {}) => {
      const llm = await scriptedLlm();
      llm.setDefaultReply(reply);
      return { llm, project: project({ ...options, llmUrl: llm.url }) };
    },
    daemon: async (configFile, options = {}) => {
      const daemon = await startDaemonProcess({ ...options, configFile });
      defer(() => daemon.kill());
      return daemon;
    },
  };
}
