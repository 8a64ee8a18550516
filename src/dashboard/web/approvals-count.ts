// The pending approvals (and questions), polled once for the whole page: the badge in the
// navigation and the approvals view read the same answer.

import { useEffect, useState } from "preact/hooks";
import { getJson } from "./api-client.js";
import type { PendingApproval, PendingQuestion } from "./api-types.js";

export interface PendingItems {
  approvals: PendingApproval[];
  /** undefined when the daemon has no questions API. */
  questions: PendingQuestion[] | undefined;
  error: string | undefined;
}

const POLL_MILLISECONDS = 2_000;
let current: PendingItems = { approvals: [], questions: undefined, error: undefined };
const listeners = new Set<(items: PendingItems) => void>();
let timer: ReturnType<typeof setTimeout> | undefined;
/** Whether this daemon answers GET /questions, read once from its OpenAPI document. */
let questionsSupported: Promise<boolean> | undefined;

async function load(): Promise<void> {
  clearTimeout(timer);
  try {
    const [approvals, questions] = await Promise.all([
      getJson<{ approvals: PendingApproval[] }>("/approvals"),
      loadQuestions(),
    ]);
    current = { approvals: approvals.approvals, questions, error: undefined };
  } catch (error) {
    current = { ...current, error: error instanceof Error ? error.message : String(error) };
  }
  for (const listener of listeners) listener(current);
  timer = setTimeout(() => void load(), POLL_MILLISECONDS);
}

async function loadQuestions(): Promise<PendingQuestion[] | undefined> {
  questionsSupported ??= getJson<{ paths?: Record<string, unknown> }>("/openapi.json").then(
    (document) => document.paths?.["/questions"] !== undefined,
    () => false,
  );
  if (!(await questionsSupported)) return undefined;
  return (await getJson<{ questions: PendingQuestion[] }>("/questions")).questions;
}

/** Loads again now (after an answer from the page). */
export function notifyApprovalsChanged(): void {
  void load();
}

/** The pending items, kept up to date while a component uses them. */
export function usePendingItems(): PendingItems {
  const [items, setItems] = useState(current);
  useEffect(() => {
    listeners.add(setItems);
    if (listeners.size === 1) void load();
    return () => {
      listeners.delete(setItems);
      if (listeners.size === 0) clearTimeout(timer);
    };
  }, []);
  return items;
}
