import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";

const scripted = useScriptedDaemon({ agents: (project) => project.writeAgent("worker", {}) });

/**
 * The audit trail and every 403 name a token by its name: a `read` token named `admin` would pass
 * for an admin there, one named `anonymous` for a request without a token (`server.auth: none`), an
 * empty or spaced name would be no name at all.
 */
describe("a named token's name", { timeout: 60_000 }, () => {
  it.each(["admin", "run", "approve", "read", "default", "anonymous", "", "ci bot", "CI", "x".repeat(65)])(
    "refuses %j",
    async (name) => {
      const reply = await scripted.daemon.request("POST", "/tokens", { name, role: "read" });
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ error: { code: "BAD_REQUEST", field: "name" } });
    },
  );

  it("takes a holder's name, and the CLI says why it refuses a role's", async () => {
    expect(
      (await scripted.daemon.request("POST", "/tokens", { name: "admin-ci.1", role: "read" })).status,
    ).toBe(201);
    const refused = await agentd(["token", "create", "--name", "admin", "--role", "read"], {
      environment: { AGENTD_URL: scripted.daemon.url, AGENTD_TOKEN: scripted.daemon.token ?? "" },
    });
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toContain("would pass for the token's role");
    const listed = (await scripted.daemon.request("GET", "/tokens")).body as {
      tokens: Array<{ name: string }>;
    };
    expect(listed.tokens.map((token) => token.name)).toEqual(["admin-ci.1"]);
  });
});
