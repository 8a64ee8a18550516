import { readFileSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { parseDuration } from "../../src/util/duration.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const UNIT = path.join(ROOT, "packaging", "agentd.service");

/** `Key=value` lines of a systemd unit, by section (the last value of a repeated key wins). */
function unitSettings(text: string): Record<string, Record<string, string>> {
  const sections: Record<string, Record<string, string>> = {};
  let current = "";
  for (const line of text.split("\n").map((raw) => raw.trim())) {
    if (line === "" || line.startsWith("#")) continue;
    const section = /^\[(.+)\]$/.exec(line)?.[1];
    if (section) sections[(current = section)] ??= {};
    else {
      const [key, ...value] = line.split("=");
      (sections[current] ??= {})[key ?? ""] = value.join("=");
    }
  }
  return sections;
}

/** Dockerfile instructions, continuation lines joined: [instruction, arguments]. */
function dockerInstructions(text: string): Array<[string, string]> {
  return text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [instruction = "", ...rest] = line.split(/\s+/);
      return [instruction.toUpperCase(), rest.join(" ")];
    });
}

describe("packaging/agentd.service", () => {
  const unit = unitSettings(readFileSync(UNIT, "utf8"));

  it("restarts on failure and gives runs more than shutdown.grace to finish on SIGTERM", () => {
    const service = unit.Service ?? {};
    expect(["simple", "notify"]).toContain(service.Type);
    expect(service.Restart).toBe("on-failure");
    expect(service.KillSignal).toBe("SIGTERM");
    const grace = ConfigSchema.parse({}).shutdown.grace;
    expect(parseDuration(`${service.TimeoutStopSec ?? "0"}s`)).toBeGreaterThan(grace);
    // bubblewrap needs user namespaces: these would break the sandbox.
    expect(service.RestrictNamespaces).toBeUndefined();
    expect(service.PrivateUsers).toBeUndefined();
    expect(unit.Install?.WantedBy).toBe("multi-user.target");
  });

  it("passes systemd-analyze verify where systemd is installed", async () => {
    const verify = await execa("systemd-analyze", ["verify", UNIT], { reject: false });
    if ((verify as { code?: string }).code === "ENOENT") return;
    // Only the unit's own problems count, not the host's (a missing user, other units).
    const problems = `${verify.stderr}`
      .split("\n")
      .filter((line) => line.includes("agentd.service") && !/User|Group|Cannot find|not found/i.test(line));
    expect(problems).toEqual([]);
  });
});

describe("Dockerfile", () => {
  const instructions = dockerInstructions(readFileSync(path.join(ROOT, "Dockerfile"), "utf8"));
  const all = (name: string) =>
    instructions.filter(([instruction]) => instruction === name).map(([, value]) => value);

  it("builds on Node 20 slim with bubblewrap, runs as a user, keeps data in a volume, checks /health", () => {
    expect(all("FROM").every((image) => /^node:20[\w.-]*slim/.test(image))).toBe(true);
    expect(all("RUN").join(" ")).toMatch(/apt-get install[^&]*bubblewrap/);
    expect(all("USER").at(-1)).toMatch(/^(?!root$)\w+/);
    expect(all("VOLUME").join(" ")).toContain("/data");
    expect(all("HEALTHCHECK").join(" ")).toContain("/health");
    expect(all("STOPSIGNAL")).toEqual(["SIGTERM"]);
  });

  it("uses only known instructions, each with arguments", () => {
    const known = [
      "FROM",
      "RUN",
      "COPY",
      "WORKDIR",
      "ENV",
      "USER",
      "VOLUME",
      "EXPOSE",
      "HEALTHCHECK",
      "STOPSIGNAL",
      "CMD",
    ];
    expect(
      instructions.filter(([instruction, value]) => !known.includes(instruction) || value === ""),
    ).toEqual([]);
  });
});
