// The page's only way to the daemon: the public HTTP API, same origin, with the session cookie.

/** An API answer other than 2xx, with the `{ error: { code, message } }` body when there is one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type UnauthorizedListener = () => void;
const unauthorizedListeners = new Set<UnauthorizedListener>();

/** Called whenever the API answers 401: the page then shows how to sign in. */
export function onUnauthorized(listener: UnauthorizedListener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

async function failure(response: Response): Promise<ApiError> {
  let code = `HTTP_${response.status}`;
  let message = response.statusText || `HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string } };
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
  } catch {
    // not JSON: keep the status line
  }
  if (response.status === 401) for (const listener of unauthorizedListeners) listener();
  return new ApiError(response.status, code, message);
}

/** GET a JSON document. */
export async function getJson<Body>(path: string, signal?: AbortSignal): Promise<Body> {
  const response = await fetch(path, { headers: { accept: "application/json" }, signal: signal ?? null });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as Body;
}

/**
 * GET a JSON document unless it still has `etag`: resolves undefined on 304. The browser cache is
 * bypassed so the 304 reaches the page, which then skips parsing and rendering.
 */
export async function getJsonIfChanged<Body>(
  path: string,
  etag: string | undefined,
  signal?: AbortSignal,
): Promise<{ body: Body; etag: string | undefined } | undefined> {
  const response = await fetch(path, {
    cache: "no-store",
    headers: { accept: "application/json", ...(etag === undefined ? {} : { "if-none-match": etag }) },
    signal: signal ?? null,
  });
  if (response.status === 304) return undefined;
  if (!response.ok) throw await failure(response);
  return { body: (await response.json()) as Body, etag: response.headers.get("etag") ?? undefined };
}

/** POST a JSON body (always `application/json`, as the API requires for every state change). */
export async function postJson<Body>(path: string, body: unknown = {}): Promise<Body> {
  const response = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as Body;
}

/** PUT a JSON body (a whole replacement, such as a memory with the version it was made from). */
export async function putJson<Body>(path: string, body: unknown): Promise<Body> {
  const response = await fetch(path, {
    method: "PUT",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as Body;
}

/** An error as one line for the page. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
