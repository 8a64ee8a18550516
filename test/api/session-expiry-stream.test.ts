import { afterEach, expect, it } from "vitest";
import { type ApiFixture, startApiFixture } from "./api-fixture.js";
import { ManualClock } from "../support/manual-clock.js";

const TOKEN = "expiry-test-token-0123456789";
const EIGHT_DAYS = 8 * 24 * 60 * 60 * 1_000;

let fixture: ApiFixture;
afterEach(() => fixture.close());

/**
 * docs/api-access.md: an event stream a browser session opened ends with the session. A session
 * also ends by running out (7 days): a dashboard tab left open that long must not keep streaming.
 */
it(
  "ends the event stream of a browser session once the session has expired",
  { timeout: 60_000 },
  async () => {
    const clock = new ManualClock(new Date("2026-03-01T10:00:00.000Z"));
    fixture = await startApiFixture({ token: TOKEN, clock, heartbeatMilliseconds: 50 });
    const login = await fetch(`${fixture.url}/auth/login?token=${TOKEN}`, { redirect: "manual" });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const controller = new AbortController();
    const response = await fetch(`${fixture.url}/agents/writer/events/stream`, {
      headers: { cookie },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // the preamble

    clock.advanceBy(EIGHT_DAYS);

    expect((await fetch(`${fixture.url}/agents`, { headers: { cookie } })).status).toBe(401);
    const cutOff = setTimeout(() => controller.abort(), 20_000);
    try {
      while (!(await reader.read()).done);
    } catch {
      // Aborted: still open.
    } finally {
      clearTimeout(cutOff);
    }
    expect(controller.signal.aborted, "the stream was still open 20 s after the session expired").toBe(false);
  },
);
