import { AgentdError } from "../errors/agentd-error.js";
import type { StorageStatus } from "../store/storage-state.js";
import { spaceFailureOf } from "../util/storage-gate.js";

/**
 * Creates a run only while the store has room: refused with STORAGE_FULL (507) while it is full,
 * and so is a creation whose own write met the full disk first (the store is full from then on).
 */
export async function createWhileStorageHasRoom<Created>(
  storage: StorageStatus | undefined,
  create: () => Promise<Created>,
): Promise<Created> {
  if (storage?.full) throw storageFullError(storage);
  try {
    return await create();
  } catch (error) {
    if (storage && spaceFailureOf(error)) throw storageFullError(storage, error);
    throw error;
  }
}

function storageFullError(storage: StorageStatus, cause?: unknown): AgentdError {
  const [reason] = storage.healthReasons();
  const failure = spaceFailureOf(cause);
  const code = reason?.error ?? failure?.code ?? "ENOSPC";
  return new AgentdError(
    "STORAGE_FULL",
    `the store is full (${code}): new runs are refused until space returns`,
    {
      hint: "free space in data_dir (or the database's disk); GET /health says why, and the daemon takes runs again by itself",
      details: { error: code, ...(reason?.file === undefined ? {} : { file: reason.file }) },
      ...(cause === undefined ? {} : { cause }),
    },
  );
}
