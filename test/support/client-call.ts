/** What a client presents: a bearer token, a browser's session cookie, both or neither. */
export interface Credential {
  token?: string;
  cookie?: string;
}

export interface ClientReply {
  status: number;
  /** The answer parsed as JSON; its text when it is not JSON; undefined when empty. */
  body: unknown;
  headers: Headers;
}

/**
 * A request as a client sends it to the daemon at `baseUrl`: with the credential given (none: no
 * Authorization and no cookie), `content-type: application/json` on a POST, redirects not followed.
 */
export async function clientCall(
  baseUrl: string,
  method: string,
  urlPath: string,
  credential: Credential,
  body?: unknown,
): Promise<ClientReply> {
  const headers: Record<string, string> = {};
  if (credential.token !== undefined) headers.authorization = `Bearer ${credential.token}`;
  if (credential.cookie !== undefined) headers.cookie = credential.cookie;
  if (method === "POST" || body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${baseUrl}${urlPath}`, {
    method,
    headers,
    redirect: "manual",
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed, headers: response.headers };
}
