import { describe, expect, it } from "vitest";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { createBearerCheck, createTokenCheck } from "../../src/api/bearer-auth.js";

describe("createTokenCheck", () => {
  const token = "s3cret-token-0123456789abcdef";
  const matches = createTokenCheck(token);

  it("accepts the token and nothing else", () => {
    expect(matches(token)).toBe(true);
    for (const other of [
      undefined,
      "",
      token.slice(0, -1),
      `${token}x`,
      `${token}\0`,
      token.toUpperCase(),
      `x${token.slice(1)}`,
      token.replace("s", "ſ"),
      " ".repeat(token.length),
      "\0".repeat(300),
    ]) {
      expect(matches(other), JSON.stringify(other)).toBe(false);
    }
    // The same answers every time: the buffer it reuses keeps nothing of the check before.
    expect(matches(token)).toBe(true);
    expect(matches(token.slice(0, 5))).toBe(false);
    expect(matches(token)).toBe(true);
  });

  it("compares tokens longer than its fixed buffer in full", () => {
    const long = "é".repeat(400);
    const check = createTokenCheck(long);
    expect(check(long)).toBe(true);
    expect(check(`${"é".repeat(399)}e`)).toBe(false);
    expect(check("é".repeat(401))).toBe(false);
    expect(check("é".repeat(128))).toBe(false);
  });

  it("tells a token of zeros from padding", () => {
    const check = createTokenCheck("ab");
    expect(check("ab\0")).toBe(false);
    expect(check("ab")).toBe(true);
  });
});

describe("createBearerCheck", () => {
  const check = createBearerCheck("s3cret");

  it("passes the right bearer token, in any case of the scheme", () => {
    expect(() => check("Bearer s3cret")).not.toThrow();
    expect(() => check("bearer   s3cret ")).not.toThrow();
  });

  it("says whether the token is missing or wrong", () => {
    const codeOf = (authorization: string | undefined) => {
      try {
        check(authorization);
      } catch (error) {
        return error instanceof AgentdError ? error.message : "other";
      }
      return "passed";
    };
    expect(codeOf(undefined)).toBe("missing bearer token");
    expect(codeOf("Basic s3cret")).toBe("missing bearer token");
    expect(codeOf("Bearer s3creT")).toBe("wrong bearer token");
    expect(codeOf("Bearer s3cret2")).toBe("wrong bearer token");
  });
});
