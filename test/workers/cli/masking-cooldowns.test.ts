import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { SecretRedactor } from "../../../src/secrets/secret-redactor.js";
import { maskingCooldowns } from "../../../src/workers/cli/cli-cooldown-records.js";
import { CliCooldowns } from "../../../src/workers/cli/cli-cooldowns.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe("maskingCooldowns", () => {
  it("keeps a CLI failure message with its secrets masked, in every form the redactor knows", () => {
    const folder = mkdtempSync(path.join(tmpdir(), "agentd-cooldowns-"));
    folders.push(folder);
    const file = path.join(folder, "cli-cooldowns.json");
    const redactor = new SecretRedactor();
    const secret = "sk-quota-secret-4417";
    redactor.add("api", secret);
    const cooldowns = maskingCooldowns(
      new CliCooldowns({ file, logger: pino({ level: "silent" }) }),
      redactor.redactText,
    );

    cooldowns.start({
      tool: "claude",
      until: new Date(Date.now() + 60_000),
      kind: "quota",
      message: `usage limit reached for key ${secret} (${Buffer.from(secret).toString("base64")})`,
    });

    const written = readFileSync(file, "utf8");
    expect(written).toContain("usage limit reached");
    expect(written).toContain("[secret:api]");
    expect(written).not.toContain(secret);
    expect(written).not.toContain(Buffer.from(secret).toString("base64"));
    expect(cooldowns.active("claude")?.message).not.toContain(secret);
  });
});
