import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { AgentdError } from "../../src/errors/agentd-error.js";

function load(lines: string[]) {
  const directory = mkdtempSync(path.join(tmpdir(), "agentd-config-"));
  const file = path.join(directory, "config.yaml");
  writeFileSync(file, ["server:", ...lines.map((line) => `  ${line}`)].join("\n"));
  return loadConfig({ file, environment: {} });
}

function errorOf(lines: string[]): AgentdError {
  try {
    load(lines);
  } catch (error) {
    if (error instanceof AgentdError) return error;
    throw error;
  }
  throw new Error("expected the config to be refused");
}

describe("server settings that would open the API to any web page", () => {
  it.each([
    ['"*"', "allowed_hosts[0]"],
    ['"*.com"', "allowed_hosts[0]"],
  ])("refuses auth: none with allowed_hosts [%s], naming the entry and DNS rebinding", (entry, field) => {
    const error = errorOf(["auth: none", `allowed_hosts: [${entry}]`]);

    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.field).toBe(`server.${field}`);
    expect(error.line).toBe(3);
    expect(error.message).toContain("DNS rebinding");
  });

  it("keeps allowed_hosts: ['*'] with a token, and named hosts with auth: none", () => {
    expect(load(['allowed_hosts: ["*"]']).config.server.allowed_hosts).toEqual(["*"]);
    const named = load(["auth: none", 'allowed_hosts: ["agentd.internal", "*.lan.example"]']);
    expect(named.config.server.allowed_hosts).toEqual(["agentd.internal", "*.lan.example"]);
  });

  it.each([
    ['"*"', 'does not take "*"'],
    ['"null"', 'cannot hold "null"'],
    ['"https://tools.example.com/app"', "is not a web origin"],
    ['"tools.example.com"', "is not a web origin"],
    ['"file:///tmp/page.html"', "is not a web origin"],
  ])("refuses allowed_origins [%s] whatever the auth", (entry, message) => {
    const error = errorOf([`allowed_origins: [${entry}]`]);

    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.field).toBe("server.allowed_origins[0]");
    expect(error.message).toContain(message);
  });

  it("keeps allowed_origins that are web origins", () => {
    const { config } = load(['allowed_origins: ["https://tools.example.com", "http://127.0.0.1:5173/"]']);
    expect(config.server.allowed_origins).toEqual(["https://tools.example.com", "http://127.0.0.1:5173/"]);
  });
});

describe("server.trust_proxy and server.secure_cookies", () => {
  it("trusts no proxy and marks cookies Secure over https by default", () => {
    const { config } = load(["port: 7070"]);
    expect(config.server.trust_proxy).toBe(false);
    expect(config.server.secure_cookies).toBe("auto");
  });

  it.each([
    [
      '["127.0.0.1", "10.0.0.0/8", "fd00::/8", "loopback"]',
      ["127.0.0.1", "10.0.0.0/8", "fd00::/8", "loopback"],
    ],
    ["2", 2],
    ["true", true],
  ])("keeps trust_proxy: %s", (value, expected) => {
    expect(load([`trust_proxy: ${value}`]).config.server.trust_proxy).toEqual(expected);
  });

  it.each(['["proxy.example.com"]', '["10.0.0.0/33"]', '["10.0.0.1/8/2"]', "[]", "0"])(
    "refuses trust_proxy: %s",
    (value) => {
      const error = errorOf([`trust_proxy: ${value}`]);
      expect(error.code).toBe("CONFIG_INVALID");
      expect(error.field).toMatch(/^server\.trust_proxy/);
    },
  );

  it("refuses a secure_cookies value it does not know", () => {
    expect(errorOf(["secure_cookies: sometimes"]).field).toBe("server.secure_cookies");
  });
});
