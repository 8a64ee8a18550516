import { describe, expect, it } from "vitest";
import { DeliveriesConfigSchema, DeliveryTargetSchema } from "../../src/config/delivery-settings.js";
import type { DeliveryRecord, DeliveryStatus } from "../../src/deliveries/delivery-record.js";
import { destinationOf, targetStatuses } from "../../src/deliveries/target-status.js";
import { makeDefinition } from "../support/make-definition.js";

const target = (settings: Record<string, unknown>) => destinationOf(DeliveryTargetSchema.parse(settings));

let sequence = 0;
function record(agent: string, name: string, status: DeliveryStatus, error?: string): DeliveryRecord {
  sequence++;
  return {
    id: `d_${String(1_000 - sequence).padStart(4, "0")}`,
    agent,
    run: null,
    target: name,
    to: "slack",
    when: "always",
    status,
    content: { text: "", facts: {} },
    attempts: [{ at: "2026-01-01T00:00:00.000Z", ok: status === "sent", ...(error ? { error } : {}) }],
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: `2026-01-01T00:00:${String(60 - sequence).padStart(2, "0")}.000Z`,
    spec: {},
  };
}

describe("delivery targets with their health", () => {
  it("shows where a target goes and never a credential", () => {
    // A Slack or Discord webhook's path is its secret; a webhook's path, query or login may hold one.
    expect(target({ to: "slack", url: "https://hooks.slack.com/services/T0/B0/abcdefSECRET" })).toBe(
      "https://hooks.slack.com/…",
    );
    expect(
      target({ to: "webhook", url: "https://user:pa55word@ci.example.com/?token=abc", secret: "s" }),
    ).toBe("https://ci.example.com/…");
    expect(target({ to: "discord", url: "https://discord.com" })).toBe("https://discord.com");
    // A vault reference is a name, shown as written; what follows it is not.
    expect(target({ to: "slack", url: "{{secret:slack_url}}" })).toBe("{{secret:slack_url}}");
    expect(target({ to: "telegram", token: "123456:BOT-TOKEN-VALUE", chat_id: 42 })).toBe(
      "chat 42 via https://api.telegram.org",
    );
    expect(target({ to: "email", recipients: ["a@example.com", "b@example.com"] })).toBe(
      "a@example.com, b@example.com",
    );
    expect(target({ to: "file", path: "reports/digest.md" })).toBe("reports/digest.md");
  });

  it("counts failures in a row, skipping open deliveries, and names config targets no agent uses", () => {
    const config = DeliveriesConfigSchema.parse({
      targets: {
        team: { to: "slack", url: "https://hooks.slack.com/services/T/B/team" },
        spare: { to: "file", path: "spare.log" },
      },
    });
    const digest = makeDefinition({
      id: "digest",
      frontmatter: {
        deliver: ["team", { to: "file", path: "out.log" }, { to: "slack", url: "https://x.test/a" }],
      },
    });
    // Newest first: team retried after two failures that followed a success; file#1 only sent.
    const deliveries = [
      record("digest", "team", "retrying", "answered 500"),
      record("digest", "team", "failed", "answered 404 SECRET-IN-ERROR"),
      record("digest", "team", "failed", "answered 404"),
      record("digest", "team", "sent"),
      record("digest", "file#1", "sent"),
    ];
    const statuses = targetStatuses([digest], config, deliveries, (text) =>
      text.replaceAll("SECRET-IN-ERROR", "***"),
    );
    expect(
      statuses.map((status) => [status.agent, status.target, status.health, status.failing_streak]),
    ).toEqual([
      ["digest", "team", "failing", 2],
      ["digest", "file#1", "ok", 0],
      ["digest", "slack#2", "untried", 0],
      [null, "spare", "untried", 0],
    ]);
    expect(statuses[0]).toMatchObject({ last_status: "retrying", last_error: "answered 500", shared: true });
    const failed = targetStatuses([digest], config, deliveries.slice(1), (text) =>
      text.replaceAll("SECRET-IN-ERROR", "***"),
    );
    expect(failed[0]?.last_error).toBe("answered 404 ***");
  });
});
