import { afterEach, describe, expect, it } from "vitest";
import type { TokenIdentifier } from "../../src/api/api-auth.js";
import type { TokenIdentity } from "../../src/access/token-registry.js";
import { type ApiFixture, startApiFixture } from "./api-fixture.js";
import { ManualClock } from "../support/manual-clock.js";
import { waitFor } from "../support/wait-for.js";

const ADMIN = "admin-token";
const WATCHER = "watcher-token";
const WEEK_MILLISECONDS = 7 * 24 * 60 * 60 * 1_000;

/** Two tokens, the watcher's revocable, as the daemon's registry would tell. */
class TwoTokens implements TokenIdentifier {
  readonly #identities = new Map<string, TokenIdentity>([
    [ADMIN, { name: "default", role: "admin", digest: "a" }],
    [WATCHER, { name: "watcher", role: "read", digest: "w" }],
  ]);
  readonly #listeners = new Set<() => void>();

  identify(token: string): TokenIdentity | undefined {
    return this.#identities.get(token);
  }
  isActive(identity: TokenIdentity): boolean {
    return [...this.#identities.values()].includes(identity);
  }
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  revoke(token: string): void {
    this.#identities.delete(token);
    for (const listener of this.#listeners) listener();
  }
}

let api: ApiFixture | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

// The clock never moves on its own: a long poll's `wait` never runs out, so a poll that answers
// was ended by the change of credentials, not by its wait.
async function start(): Promise<{ api: ApiFixture; clock: ManualClock; tokens: TwoTokens }> {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const tokens = new TwoTokens();
  api = await startApiFixture({ token: ADMIN, tokens, clock });
  return { api, clock, tokens };
}

async function login(fixture: ApiFixture, token: string): Promise<string> {
  const reply = await fetch(`${fixture.url}/auth/login?token=${token}`, { redirect: "manual" });
  expect(reply.status).toBe(303);
  return (reply.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
}

describe("a long poll whose credentials lapse while it waits", () => {
  it("answers 401 at once when its token is revoked", async () => {
    const { api, tokens } = await start();
    const poll = await startedPoll(api, { authorization: `Bearer ${WATCHER}` });
    tokens.revoke(WATCHER);
    expect((await poll.answer).status).toBe(401);
    expect(api.store.waiting).toBe(0);
  });

  it("answers 401 at once when its browser session logs out", async () => {
    const { api } = await start();
    const cookie = await login(api, WATCHER);
    const poll = await startedPoll(api, { cookie });
    const logout = await fetch(`${api.url}/auth/logout`, { method: "POST", headers: { cookie } });
    expect(logout.status).toBe(204);
    expect((await poll.answer).status).toBe(401);
  });

  it("answers 401 at once when its browser session expires", async () => {
    const { api, clock } = await start();
    const cookie = await login(api, WATCHER);
    clock.advanceBy(WEEK_MILLISECONDS - 1_000);
    const poll = await startedPoll(api, { cookie });
    // The poll's own wait (60 s) would end later than the session (1 s).
    clock.advanceBy(1_000);
    expect((await poll.answer).status).toBe(401);
  });
});

describe("an event stream opened by a browser session", () => {
  it("ends when the session expires, on the daemon's clock", async () => {
    const { api, clock } = await start();
    const cookie = await login(api, WATCHER);
    const response = await fetch(`${api.url}/agents/writer/events/stream`, { headers: { cookie } });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // the preamble
    clock.advanceBy(WEEK_MILLISECONDS - 1);
    const before = await fetch(`${api.url}/agents/writer/events`, { headers: { cookie } });
    expect(before.status).toBe(200);
    clock.advanceBy(1);
    while (!(await reader.read()).done);
    const after = await fetch(`${api.url}/agents/writer/events`, { headers: { cookie } });
    expect(after.status).toBe(401);
  });
});

/** A long poll already waiting: its answer, still to come. */
async function startedPoll(
  fixture: ApiFixture,
  headers: Record<string, string>,
): Promise<{ answer: Promise<Response> }> {
  const before = fixture.store.waiting;
  const answer = fetch(`${fixture.url}/agents/writer/events?wait=60`, { headers });
  await waitFor(() => fixture.store.waiting > before || undefined, "the poll waiting");
  return { answer };
}
