import { afterEach, describe, expect, it } from "vitest";
import type { PendingApproval } from "../../src/approvals/approval-broker.js";
import { agentDetail, type ApiFixture, startApiFixture } from "./api-fixture.js";

let fixture: ApiFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

interface Page<Item> {
  items: Item[];
  next: string | null;
}

/** Follows `next` from the first page on; returns every page. */
async function allPages<Item>(
  api: ApiFixture,
  route: string,
  key: string,
  limit: number,
): Promise<Array<Page<Item>>> {
  const pages: Array<Page<Item>> = [];
  let after: string | null | undefined;
  do {
    const query = new URLSearchParams({ limit: String(limit), ...(after ? { after } : {}) });
    const response = await api.request(`${route}?${query.toString()}`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    const page = { items: body[key] as Item[], next: body["next"] as string | null };
    pages.push(page);
    after = page.next;
  } while (after !== null && pages.length < 100);
  return pages;
}

function approval(index: number): PendingApproval {
  return {
    id: `a_${String(index).padStart(3, "0")}`,
    agent: "writer",
    run: "r_1",
    tool: "shell",
    requested_at: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(),
  };
}

describe("paged list routes", () => {
  it("pages GET /agents by id with limit and after, the next page from `next`", async () => {
    const ids = Array.from({ length: 25 }, (_, index) => `agent-${String(index).padStart(2, "0")}`);
    fixture = await startApiFixture({ agents: [...ids].reverse().map((id) => agentDetail(id)) });
    const pages = await allPages<{ id: string }>(fixture, "/agents", "agents", 10);
    expect(pages.map((page) => page.items.length)).toEqual([10, 10, 5]);
    expect(pages.flatMap((page) => page.items.map((agent) => agent.id))).toEqual(ids);
    expect(pages.at(-1)?.next).toBeNull();
    // Without limit, one page holds every agent of a folder of thousands.
    const whole = (await (await fixture.request("/agents")).json()) as { agents: unknown[]; next: null };
    expect(whole.agents).toHaveLength(25);
    expect(whole.next).toBeNull();
    expect((await fixture.request("/agents?limit=10001")).status).toBe(400);
    // An id defined twice (two agents folders) is never split across two pages.
    fixture.agents.list = () => ids.flatMap((id) => [agentDetail(id), agentDetail(id, false)]);
    const twice = await allPages<{ id: string }>(fixture, "/agents", "agents", 3);
    expect(twice.map((page) => page.items.length)).toEqual([...Array<number>(12).fill(4), 2]);
    expect(twice.flatMap((page) => page.items.map((agent) => agent.id))).toEqual(
      ids.flatMap((id) => [id, id]),
    );
    expect((await fixture.request("/agents?limit=0")).status).toBe(400);
  });

  it("pages GET /approvals oldest first, and an answered approval does not break the next page", async () => {
    fixture = await startApiFixture();
    fixture.approvals.pending = Array.from({ length: 30 }, (_, index) => approval(index));
    const first = (await (await fixture.request("/approvals?limit=12")).json()) as {
      approvals: PendingApproval[];
      next: string;
    };
    expect(first.approvals.map((item) => item.id)).toEqual(
      Array.from({ length: 12 }, (_, index) => approval(index).id),
    );
    // The last approval of the page is answered before the next page is asked for.
    const decided = await fixture.request(`/approvals/${approval(11).id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "deny" }),
    });
    expect(decided.status).toBe(200);
    const second = (await (await fixture.request(`/approvals?limit=12&after=${first.next}`)).json()) as {
      approvals: PendingApproval[];
    };
    expect(second.approvals.map((item) => item.id)).toEqual(
      Array.from({ length: 12 }, (_, index) => approval(index + 12).id),
    );
    // The default page is 1,000; the most 10,000.
    const whole = (await (await fixture.request("/approvals")).json()) as {
      approvals: unknown[];
      next: null;
    };
    expect(whole.approvals).toHaveLength(29);
    expect(whole.next).toBeNull();
    expect((await fixture.request("/approvals?limit=10001")).status).toBe(400);
    expect((await fixture.request("/approvals?after=not%20a%20cursor")).status).toBe(400);
  });

  it("answers GET /questions as a page too", async () => {
    fixture = await startApiFixture();
    const body = (await (await fixture.request("/questions?limit=5")).json()) as Record<string, unknown>;
    expect(body).toEqual({ questions: [], next: null });
  });
});
