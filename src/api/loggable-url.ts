/** Query parameters whose value may be a credential: a login's `token`, `access_token`, `api_key`… */
const CREDENTIAL_PARAMETER = /token|secret|password|passwd|key|auth|sig/i;

/**
 * A request's URL as the log may keep it: without its query when any parameter's name says it may
 * hold a credential. The login's URL carries the token, and a client may put a token in the query
 * of any route, misspelled login routes included (`//auth/login`, `/AUTH/login`): none is accepted
 * there, but each would be logged as sent.
 */
export function loggableUrl(url: string): string {
  const queryStart = url.indexOf("?");
  if (queryStart === -1) return url;
  for (const name of new URLSearchParams(url.slice(queryStart + 1)).keys()) {
    if (CREDENTIAL_PARAMETER.test(name)) return url.slice(0, queryStart);
  }
  return url;
}
