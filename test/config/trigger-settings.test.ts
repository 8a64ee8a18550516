import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";

describe("config triggers.webhook_body_limit", () => {
  const limitOf = (value: unknown) => {
    const parsed = ConfigSchema.safeParse(
      value === undefined ? {} : { triggers: { webhook_body_limit: value } },
    );
    return parsed.success ? parsed.data.triggers.webhook_body_limit : parsed.error.issues[0]?.message;
  };

  it("is 1 MiB by default and takes bytes or a size with a unit", () => {
    expect(limitOf(undefined)).toBe(1_048_576);
    expect(limitOf(2_048)).toBe(2_048);
    expect(limitOf("2MiB")).toBe(2 * 1_048_576);
    expect(limitOf("512 KiB")).toBe(512 * 1_024);
    expect(limitOf("1500000")).toBe(1_500_000);
  });

  it("refuses a limit too small, too large or not a size", () => {
    expect(limitOf(100)).toBe("must be 1KiB or more");
    expect(limitOf("1GiB")).toMatch(/must be bytes/);
    expect(limitOf(1e9)).toBe("must be 64MiB or less");
    expect(limitOf(1.5)).toBe("must be a whole number of bytes");
    expect(limitOf("abc")).toMatch(/must be bytes/);
  });
});
