import { describe, expect, it } from "vitest";
import { agentd as agentdCli } from "../support/agentd-cli.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";

const VAULT_KEY = "2f".repeat(32);

const scripted = useScriptedDaemon({
  config: { vault: { backend: "file" } },
  environment: { AGENTD_VAULT_KEY: VAULT_KEY },
  agents: (project) => {
    project.writeAgent("quiet", {});
  },
});

async function readToken(): Promise<string> {
  const created = await agentdCli(["token", "create", "--name", "reader", "--role", "read"], {
    environment: {
      AGENTD_URL: scripted.daemon.url,
      AGENTD_TOKEN: scripted.daemon.token ?? "",
      AGENTD_VAULT_KEY: VAULT_KEY,
    },
  });
  expect(created.exitCode, created.stderr).toBe(0);
  return created.stdout.trim();
}

/** The status a raw request gets: the path is sent byte for byte, never normalised by a client. */
async function status(method: string, rawPath: string, token: string, body?: string): Promise<number> {
  const { request } = await import("node:http");
  const url = new URL(scripted.daemon.url);
  return new Promise((resolve, reject) => {
    const sent = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: rawPath,
        headers: {
          host: url.host,
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
      },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
      },
    );
    sent.on("error", reject);
    sent.end(body);
  });
}

describe("a read token against admin routes spelled another way", () => {
  it("reaches neither the audit trail nor the tokens by HEAD, case, slashes, encodings or ;", async () => {
    const token = await readToken();
    // The routes exist and answer an admin: a 403 or 404 below is the role's doing.
    const admin = scripted.daemon.token ?? "";
    for (const rawPath of ["/audit", "/tokens"]) {
      expect(await status("GET", rawPath, admin), rawPath).toBe(200);
    }
    expect(await status("GET", "/audit", token)).toBe(403);
    const reads = [
      ["GET", "/audit"],
      ["HEAD", "/audit"],
      ["GET", "/tokens"],
      ["HEAD", "/tokens"],
      ["GET", "/AUDIT"],
      ["GET", "//audit"],
      ["GET", "/audit/"],
      ["GET", "/audit;x"],
      ["GET", "/%61udit"],
      ["GET", "/./audit"],
      ["GET", "/x/../audit"],
      ["GET", "/audit?x=/health"],
      ["GET", "/tokens%2F"],
      ["GET", "/health/../tokens"],
      ["GET", "/docs/../tokens"],
      ["GET", "/docs/%2e%2e/tokens"],
      ["GET", "/docs/..%2ftokens"],
    ];
    for (const [method, rawPath] of reads) {
      const got = await status(method as string, rawPath as string, token);
      expect([403, 404, 400], `${method} ${rawPath} answered ${got}`).toContain(got);
    }
    const writes = [
      ["POST", "/tokens", '{"name":"x","role":"admin"}'],
      ["POST", "//tokens", '{"name":"x","role":"admin"}'],
      ["POST", "/Tokens", '{"name":"x","role":"admin"}'],
      ["POST", "/tokens;a", '{"name":"x","role":"admin"}'],
      ["POST", "/docs/../tokens", '{"name":"x","role":"admin"}'],
    ];
    for (const [method, rawPath, body] of writes) {
      const got = await status(method as string, rawPath as string, token, body);
      expect([403, 404, 400], `${method} ${rawPath} answered ${got}`).toContain(got);
    }
  });
});
