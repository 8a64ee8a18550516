import { beforeAll } from "vitest";
import type { DaemonProcess } from "./daemon-process.js";
import type { ScriptedLlmServer, ScriptedReply } from "./scripted-llm-server.js";
import type { TempProject, TempProjectOptions } from "./temp-project.js";
import { useTestKit } from "./test-kit.js";

export interface ScriptedDaemonOptions extends Omit<TempProjectOptions, "llmUrl"> {
  /** How the model answers by default (a test may also queue replies on `llm`). */
  reply?: ScriptedReply;
  /** Writes the agents (and anything else the daemon must find at start) into the project. */
  agents(project: TempProject): void;
  /** Variables for the daemon process (vault values, keys). */
  environment?: Record<string, string>;
}

/** The scripted model, the project and the real daemon on it, as every test of the file sees them. */
export interface ScriptedDaemon {
  readonly llm: ScriptedLlmServer;
  readonly project: TempProject;
  readonly daemon: DaemonProcess;
}

/**
 * One daemon for the whole test file, on a project whose model is scripted: started in `beforeAll`,
 * killed and removed after the file's last test. For files whose tests each start their own runs on
 * the same agents; a test that restarts or kills the daemon uses the kit's `scriptedProject` instead.
 */
export function useScriptedDaemon(options: ScriptedDaemonOptions): ScriptedDaemon {
  const kit = useTestKit("file");
  let started: ScriptedDaemon | undefined;
  beforeAll(async () => {
    const { reply, agents, environment, ...projectOptions } = options;
    const { llm, project } = await kit.scriptedProject(reply, projectOptions);
    agents(project);
    const daemon = await kit.daemon(project.configFile, environment === undefined ? {} : { environment });
    started = { llm, project, daemon };
  }, 60_000);
  const now = (): ScriptedDaemon => {
    if (!started) throw new Error("the scripted daemon exists only once the file's beforeAll ran");
    return started;
  };
  return {
    get llm() {
      return now().llm;
    },
    get project() {
      return now().project;
    },
    get daemon() {
      return now().daemon;
    },
  };
}
