import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import pino from "pino";
import { ConfigSchema } from "../../src/config/config-schema.js";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { EventBus } from "../../src/events/event-bus.js";
import { RunControl } from "../../src/run-vocabulary/run-control.js";
import { SandboxHost } from "../../src/sandbox/sandbox-host.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { builtinTools } from "../../src/tools/builtin/builtin-tools.js";
import { DefaultToolExecutor } from "../../src/tools/default-tool-executor.js";
import { CompositeToolCatalog } from "../../src/tools/tool-catalog.js";
import type { ToolResult } from "../../src/tools/tool-executor.js";
import { EnvVault } from "../../src/vault/env-vault.js";
import { makeDefinition } from "../support/make-definition.js";

/** How one call is made: the agent's `sandbox:` and `hooks:`, the daemon's sandbox, the workdir. */
export interface CallOptions {
  sandbox?: unknown;
  hooks?: unknown;
  host?: SandboxHost;
  /** Default: the agent's default workspace, `.agentd/workspaces/me`. */
  workdir?: string;
}

/** What each planted file holds: a test asserts none of it reaches a sandboxed command. */
export const MARKERS = {
  vaultKey: "vault-key-marker-4f1c",
  vault: "vault-file-marker-9a2e",
  config: "config-file-marker-77b0",
  otherWorkspace: "other-workspace-marker-3d5a",
  home: "home-marker-c81f",
  runs: "run-record-marker-51e2",
};

/**
 * A project outside /tmp (a sandbox's /tmp is private, which would hide everything there anyway):
 * `etc/config.yaml`, `data/` with a vault and key, `agents/`, the default workspaces of `me` and
 * `other`, a home folder with a private key, and `outside/` that no command may write.
 */
export class SandboxProject {
  readonly root = realpathSync(mkdtempSync("/var/tmp/agentd-sandbox-test-"));
  readonly configFile = path.join(this.root, "etc", "config.yaml");
  readonly dataDirectory = path.join(this.root, "data");
  readonly home = path.join(this.root, "home");
  readonly outside = path.join(this.root, "outside");
  readonly workspaces = path.join(this.root, ".agentd", "workspaces");
  readonly workdir = path.join(this.workspaces, "me");
  readonly events: AgentEvent[] = [];
  readonly #bus = new EventBus();
  #calls = 0;

  constructor() {
    const files: Record<string, string> = {
      "etc/config.yaml": `# ${MARKERS.config}\n`,
      "data/vault.key": MARKERS.vaultKey,
      "data/vault.json": `{"data":"${MARKERS.vault}"}`,
      "data/runs/r_1.json": `{"result":"${MARKERS.runs}"}`,
      ".agentd/workspaces/other/notes.txt": MARKERS.otherWorkspace,
      "home/.ssh/id_ed25519": MARKERS.home,
      "home/.config/tool/settings": "visible-when-listed",
      "agents/me.md": "---\ndescription: me\n---\nHi\n",
    };
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(this.root, file)), { recursive: true });
      writeFileSync(path.join(this.root, file), content);
    }
    mkdirSync(this.workdir, { recursive: true });
    mkdirSync(this.outside);
    this.#bus.subscribe((event) => this.events.push(event));
  }

  /**
   * The daemon's sandbox for this project; `environment` defaults to the test's, HOME = the
   * project's home; `sandbox` is config's `sandbox:` (`unix_sockets`).
   */
  host(
    environment: NodeJS.ProcessEnv = { ...process.env, HOME: this.home },
    sandbox: Record<string, unknown> = {},
  ): SandboxHost {
    const defaults = ConfigSchema.parse({ sandbox });
    return new SandboxHost({
      config: {
        ...defaults,
        data_dir: this.dataDirectory,
        agents_dir: path.join(this.root, "agents"),
        presets_dir: path.join(this.root, "presets"),
      },
      configFile: this.configFile,
      environment,
    });
  }

  /** One call of a built-in tool through the real executor, as agent `me` with this `sandbox:`. */
  async call(tool: string, input: Record<string, unknown>, options: CallOptions = {}): Promise<ToolResult> {
    const executor = new DefaultToolExecutor({
      catalog: new CompositeToolCatalog(builtinTools()),
      approvals: { request: async () => ({ approved: false, state: "denied", scope: "once" }) },
      vault: new EnvVault({}),
      redactor: new SecretRedactor(),
      settings: ConfigSchema.parse({}).tools,
      sandbox: options.host ?? this.host(),
      logger: pino({ level: "silent" }),
    });
    const definition = makeDefinition({
      id: "me",
      workdir: options.workdir ?? this.workdir,
      frontmatter: {
        ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
        tools: [tool],
        permissions: { allow: [tool] },
        ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
      },
    });
    const control = new RunControl();
    try {
      return await executor.execute(
        { callId: `call_${++this.#calls}`, tool, argumentsJson: JSON.stringify(input) },
        { runId: "r_test", definition, control, events: this.#bus, setStatus: () => undefined },
      );
    } finally {
      control.dispose();
    }
  }

  /** `shell` with this command line. */
  shell(command: string, options: CallOptions = {}): Promise<ToolResult> {
    return this.call("shell", { command }, options);
  }

  dispose(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}
