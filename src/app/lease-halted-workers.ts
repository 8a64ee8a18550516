import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { LeaseWatch } from "../store/cluster-membership.js";
import type { Worker } from "../workers/worker.js";

/**
 * Workers whose runs wait while this node's cluster lease is not known to hold (the node was
 * frozen, or cut from PostgreSQL, past its own deadline): each run's control reads the lease before
 * every model call, tool call and CLI start (RunControl.followLease), so a node waking from a freeze
 * starts nothing before it knows; a CLI child already running is stopped (SIGSTOP) with its tree
 * as for a pause, and the run's timeout clock stops. A renewal that succeeds lets the runs go on;
 * a node that finds its lease lost lets them go without a record (takeover relinquish), and its
 * new runs start under its new membership. A daemon alone on its store has no lease: its workers
 * are returned as they are.
 */
export function haltingWhileLeaseLapsed(
  workerFor: (definition: AgentDefinition) => Worker,
  lease: LeaseWatch | undefined,
): (definition: AgentDefinition) => Worker {
  if (lease === undefined) return workerFor;
  return (definition) => {
    const worker = workerFor(definition);
    return {
      run: async (context) => {
        const { control } = context;
        control.followLease(() => lease.held());
        const stopFollowing = lease.onChange((held) =>
          held ? control.release("lease") : control.hold("lease"),
        );
        if (!lease.held()) control.hold("lease");
        try {
          return await worker.run(context);
        } finally {
          stopFollowing();
          control.release("lease");
        }
      },
    };
  };
}
