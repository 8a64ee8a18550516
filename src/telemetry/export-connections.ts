import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import type { Socket } from "node:net";

/** The connections the OTLP exporter makes to the collector, and how to give up on them. */
export interface ExportConnections {
  /** The exporter's agent for `http:` or `https:` (its `httpAgentOptions` factory). */
  agentFor(protocol: string): HttpAgent;
  /**
   * Cuts every connection open now and refuses every later one, with an error the exporter does
   * not retry: an export waiting on a collector that never answers (or answers a byte at a time)
   * ends at once, and so does any retry the exporter still had scheduled, as soon as it starts.
   */
  abandon(): void;
  /**
   * From now on a connection that fails (the collector is down) is final: the exporter would
   * otherwise retry it after a pause of up to 5 s, past the stop's bound.
   */
  stopRetrying(): void;
}

/**
 * Not a network error the exporter retries (ECONNRESET, ECONNREFUSED…): a retry would only wait
 * again for the collector the stop gave up on.
 */
const ABANDONED = "AGENTD_TRACES_ABANDONED";

/**
 * Keep-alive agents, as the SDK's own default, that remember their open sockets. Without them a
 * stop that gave up on the collector after its bound still waited for the export's own timeout
 * (10 s by default, each of its retries too, and an answer trickling in never times out): the
 * request's socket kept the process alive after everything else had closed.
 */
export function exportConnections(): ExportConnections {
  const open = new Set<Socket>();
  let abandoned = false;
  let retrying = true;
  const abandonedError = () =>
    Object.assign(new Error("the daemon stopped waiting for the trace collector"), { code: ABANDONED });
  const track = (socket: Socket): Socket => {
    if (abandoned) {
      process.nextTick(() => socket.destroy(abandonedError()));
      return socket;
    }
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    // Before the request's own listener: the error it is handed then carries a code not retried.
    socket.prependListener("error", (error: NodeJS.ErrnoException) => {
      if (!retrying) error.code = ABANDONED;
    });
    return socket;
  };
  class TrackedHttpAgent extends HttpAgent {
    override createConnection(...args: Parameters<HttpAgent["createConnection"]>) {
      return track(super.createConnection(...args) as Socket);
    }
  }
  class TrackedHttpsAgent extends HttpsAgent {
    override createConnection(...args: Parameters<HttpAgent["createConnection"]>) {
      return track(super.createConnection(...args) as Socket);
    }
  }
  let http: HttpAgent | undefined;
  let https: HttpsAgent | undefined;
  return {
    agentFor: (protocol) =>
      protocol === "https:"
        ? (https ??= new TrackedHttpsAgent({ keepAlive: true }))
        : (http ??= new TrackedHttpAgent({ keepAlive: true })),
    stopRetrying: () => {
      retrying = false;
    },
    abandon: () => {
      retrying = false;
      abandoned = true;
      for (const socket of open) socket.destroy(abandonedError());
      open.clear();
    },
  };
}
