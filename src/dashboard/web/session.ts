// The signed-in session's role, from GET /auth/session: the views hide what it cannot do.

import { useEffect, useState } from "preact/hooks";
import type { Role } from "../../access/role.js";
import { getJson } from "./api-client.js";

/** What GET /auth/session answers. */
export interface Session {
  role: Role;
  actor: { kind: string; name: string };
  authenticated: boolean;
}

let current: Session | undefined;
let loading: Promise<Session | undefined> | undefined;
const listeners = new Set<(session: Session | undefined) => void>();

function load(): Promise<Session | undefined> {
  loading ??= getJson<Session>("/auth/session")
    .then((session) => {
      current = session;
      for (const listener of listeners) listener(session);
      return session;
    })
    .catch(() => {
      loading = undefined;
      return undefined;
    });
  return loading;
}

/** The session once known (undefined until then: actions stay hidden rather than flash). */
export function useSession(): Session | undefined {
  const [session, setSession] = useState(current);
  useEffect(() => {
    listeners.add(setSession);
    // Known since this view's first render (another view's request came back in between): the
    // listener was not there to hear it, and a finished load tells nobody again.
    if (current !== undefined) setSession(current);
    void load();
    return () => void listeners.delete(setSession);
  }, []);
  return session;
}

/** Whether the session may do what `needed` allows: the API's rule (src/access/role.ts). */
export function sessionAllows(session: Session | undefined, needed: "run" | "approve" | "admin"): boolean {
  if (session === undefined) return false;
  return session.role === "admin" || session.role === needed;
}

/** Whether the session's role allows `needed`, as a hook. */
export function useAllowed(needed: "run" | "approve" | "admin"): boolean {
  return sessionAllows(useSession(), needed);
}
