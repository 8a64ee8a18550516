import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { AgentFrontmatterSchema } from "../../src/definitions/agent-schema.js";
import { retentionOf } from "../../src/config/retention-policy.js";
import { configuredRetention, retentionOverrideOf } from "../../src/config/retention-settings.js";

describe("retention settings", () => {
  it("defaults in config, keeps the default for null, and lets an agent override key by key", () => {
    expect(configuredRetention(ConfigSchema.parse({}).retention)).toEqual({ days: 90, runsPerAgent: 10_000 });
    const config = ConfigSchema.parse({ retention: { days: 7, runs_per_agent: null } });
    expect(configuredRetention(config.retention)).toEqual({ days: 7, runsPerAgent: 10_000 });
    const agent = AgentFrontmatterSchema.parse({
      description: "d",
      retention: { runs_per_agent: 3, days: null },
    });
    expect(retentionOf(configuredRetention(config.retention), retentionOverrideOf(agent.retention))).toEqual({
      days: 7,
      runsPerAgent: 3,
    });
    expect(ConfigSchema.safeParse({ retention: { days: 0 } }).success).toBe(false);
    expect(AgentFrontmatterSchema.safeParse({ description: "d", retention: { weeks: 2 } }).success).toBe(
      false,
    );
  });
});
