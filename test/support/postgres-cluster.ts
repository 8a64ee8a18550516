import pg from "pg";
import type { DaemonProcess } from "./daemon-process.js";
import { type PostgresServer, startPostgres } from "./postgres-server.js";
import type { ScriptedLlmServer, ScriptedReply } from "./scripted-llm-server.js";
import type { TempProject } from "./temp-project.js";
import type { TestKit } from "./test-kit.js";

/** Real daemons on one real PostgreSQL and one scripted model: a cluster, undone by the test kit. */
export interface PostgresCluster {
  postgres: PostgresServer;
  /** Connections of the test's own to the cluster's database, for looking at what was written. */
  database: pg.Pool;
  llm: ScriptedLlmServer;
  /** The daemons in the order they started; a node started again replaces its entry. */
  nodes: DaemonProcess[];
  /** Each node's project: its config file and its own agents folder. */
  projects: TempProject[];
  /** Each node's id in the cluster, as its /health reports it (a node started again has a new one). */
  ids: string[];
  /** The daemon of the node with this id (a run record's `node`). */
  nodeWithId(id: string | undefined): DaemonProcess;
  /** Starts node `index` again on its project, after a kill or a SIGTERM. */
  restart(index: number): Promise<DaemonProcess>;
}

export interface PostgresClusterOptions {
  nodes: number;
  /** config `store.lease` (default: the config's). */
  lease?: number;
  /** Config values of node `index` over the project's defaults (`store` is set here). */
  config?: (index: number) => Record<string, unknown>;
  /** The store URL node `index` connects to (default: PostgreSQL's own; a proxy's, to cut it). */
  storeUrl?: (index: number, url: string) => string;
  /** Environment variables of node `index`'s daemon (a faked clock). */
  environment?: (index: number) => Record<string, string>;
  /** Writes node `index`'s agents. */
  agents: (project: TempProject, index: number) => void;
  /** The model's answers, set before the first node starts (a schedule may fire at once). */
  reply: ScriptedReply;
}

/**
 * Starts PostgreSQL, a scripted model server and `nodes` daemons on them one after the other, each
 * with its own project (data_dir, agents). Everything is stopped by `kit`'s clean-up: the daemons
 * first, PostgreSQL last.
 */
export async function startPostgresCluster(
  kit: TestKit,
  options: PostgresClusterOptions,
): Promise<PostgresCluster> {
  const postgres = await startPostgres();
  kit.defer(() => postgres.stop());
  // A pool: it connects again after PostgreSQL was paused (`postgres.pause()` cuts connections).
  const database = new pg.Pool({ connectionString: postgres.url, max: 2 });
  database.on("error", () => undefined);
  kit.defer(() => database.end().catch(() => undefined));
  const llm = await kit.scriptedLlm();
  llm.setDefaultReply(options.reply);
  const store = {
    backend: "postgres",
    url: postgres.url,
    ...(options.lease === undefined ? {} : { lease: options.lease }),
  };
  const projects: TempProject[] = [];
  const nodes: DaemonProcess[] = [];
  const ids: string[] = [];
  const start = async (index: number): Promise<DaemonProcess> => {
    const project = projects[index] as TempProject;
    const environment = options.environment?.(index);
    const daemon = await kit.daemon(project.configFile, environment ? { environment } : {});
    nodes[index] = daemon;
    ids[index] = ((await daemon.request("GET", "/health")).body as { node: string }).node;
    return daemon;
  };
  for (let index = 0; index < options.nodes; index++) {
    const url = options.storeUrl?.(index, postgres.url) ?? postgres.url;
    const project = kit.project({
      llmUrl: llm.url,
      config: { ...options.config?.(index), store: { ...store, url } },
    });
    options.agents(project, index);
    projects.push(project);
    await start(index);
  }
  return {
    postgres,
    database,
    llm,
    nodes,
    projects,
    ids,
    nodeWithId: (id) => {
      const daemon = nodes[ids.indexOf(id ?? "")];
      if (daemon === undefined) throw new Error(`no node of the cluster has the id ${id}`);
      return daemon;
    },
    restart: start,
  };
}

/** The events of `agent` a node read from PostgreSQL, from its /metrics (0 before the first). */
export async function eventsReadBy(node: DaemonProcess, agent: string): Promise<number> {
  const text = await fetch(`${node.url}/metrics`, { headers: node.headers() }).then((reply) => reply.text());
  const line = text
    .split("\n")
    .find((candidate) => candidate.startsWith(`agentd_store_events_read_total{agent="${agent}"}`));
  return line === undefined ? 0 : Number(line.split(" ").at(-1));
}
