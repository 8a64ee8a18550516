// Small hooks shared by the views: the current route, a ticking clock, a polled API document.

import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { describeError } from "./api-client.js";
import { parseRoute, type Route } from "./route.js";

/**
 * The route in the URL hash, updated on navigation. The hash is read again once the listener is
 * on: a navigation between the first render and the effect (a link followed while the page still
 * loads) fired its `hashchange` with nobody listening, and the page stayed on the route it started
 * with.
 */
export function useRoute(): Route {
  const [hash, setHash] = useState(() => location.hash);
  useEffect(() => {
    const update = () => setHash(location.hash);
    addEventListener("hashchange", update);
    update();
    return () => removeEventListener("hashchange", update);
  }, []);
  return useMemo(() => parseRoute(hash), [hash]);
}

/** The current time, refreshed every `intervalMilliseconds` (relative times, countdowns). */
export function useNow(intervalMilliseconds = 10_000): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const timer = setInterval(() => setNow(new Date()), intervalMilliseconds);
    return () => clearInterval(timer);
  }, [intervalMilliseconds]);
  return now;
}

export interface Polled<Value> {
  value: Value | undefined;
  error: string | undefined;
  /** Fetches again now (after an action changed what the document shows). */
  refresh: () => void;
}

/**
 * Loads a document and loads it again every `intervalMilliseconds` while the tab is visible;
 * `load` receives a signal aborted when the view goes away or `key` changes.
 */
export function usePolling<Value>(
  key: string,
  load: (signal: AbortSignal) => Promise<Value | undefined>,
  intervalMilliseconds: number,
): Polled<Value> {
  const [value, setValue] = useState<Value | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [generation, setGeneration] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    setValue(undefined);
    setError(undefined);
  }, [key]);
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      if (document.visibilityState === "visible") {
        try {
          const next = await loadRef.current(controller.signal);
          if (controller.signal.aborted) return;
          // undefined = unchanged (a 304): keep what is shown, render nothing.
          if (next !== undefined) setValue(next);
          setError(undefined);
        } catch (caught) {
          if (controller.signal.aborted) return;
          setError(describeError(caught));
        }
      }
      timer = setTimeout(() => void tick(), intervalMilliseconds);
    };
    void tick();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [key, generation, intervalMilliseconds]);
  return { value, error, refresh: () => setGeneration((count) => count + 1) };
}
