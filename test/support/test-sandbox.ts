import path from "node:path";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { SandboxHost } from "../../src/sandbox/sandbox-host.js";

/**
 * The daemon's sandbox for a test project folder: data_dir `<project>/data`, agents
 * `<project>/agents`, default workspaces `<project>/.agentd/workspaces`. `environment`: where
 * HOME, PATH and the host's socket places come from (default the test's own).
 */
export function testSandboxHost(
  project: string,
  configFile?: string,
  environment?: NodeJS.ProcessEnv,
): SandboxHost {
  const config = ConfigSchema.parse({});
  return new SandboxHost({
    config: {
      ...config,
      data_dir: path.join(project, "data"),
      agents_dir: path.join(project, "agents"),
      presets_dir: path.join(project, "presets"),
    },
    configFile,
    ...(environment === undefined ? {} : { environment }),
  });
}
