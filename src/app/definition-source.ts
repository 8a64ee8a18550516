import type { DefinitionSnapshot } from "../definitions/definition-snapshot.js";

/**
 * What the daemon needs from the definitions registry: the current snapshot, a call when it
 * changes (hot reload), and closing its watcher. The DefinitionRegistry fits it; tests may pass
 * anything else that does.
 */
export interface DefinitionSource {
  snapshot(): DefinitionSnapshot;
  onChange(listener: () => void): () => void;
  close(): Promise<void> | void;
}
