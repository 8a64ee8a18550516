import { readFileSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { parseDuration } from "../../src/util/duration.js";
import { parse as parseYaml } from "yaml";
import { unitSettings } from "./systemd-emulation.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const UNIT = path.join(ROOT, "packaging", "agentd.service");

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
    // What breaks bubblewrap is checked in systemd-sandbox.test.ts.
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
    expect(all("STOPSIGNAL")).toEqual(["SIGTERM"]);
  });

  it("checks the daemon and a sandboxed call, and gives the node user the default workspaces", () => {
    // agentd health: /health answers ok and a shell call runs in the sandbox, in the workspaces root.
    expect(all("HEALTHCHECK").join(" ")).toMatch(/agentd\.js", "health"/);
    const setup = all("RUN").join(" ");
    expect(setup).toMatch(/chown node:node [^&]*\/app\/\.agentd/);
    expect(all("VOLUME").join(" ")).toContain("/app/.agentd");
    // `docker exec … agentd run` finds the daemon through /app/config.yaml in the working folder.
    expect(setup).toContain("ln -s /app/bin/agentd.js /usr/local/bin/agentd");
    expect(all("WORKDIR").at(-1)).toBe("/app");
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

describe("compose.yaml", () => {
  const compose = parseYaml(readFileSync(path.join(ROOT, "compose.yaml"), "utf8")) as {
    services: Record<string, Record<string, unknown>>;
    volumes: Record<string, unknown>;
  };
  const agentd = compose.services["agentd"] ?? {};
  const dockerfile = readFileSync(path.join(ROOT, "Dockerfile"), "utf8");
  const deployment = readFileSync(path.join(ROOT, "docs", "deployment.md"), "utf8");

  it("lifts exactly the confinements bubblewrap cannot work under, and no more", () => {
    expect(new Set(agentd["security_opt"] as string[])).toEqual(
      new Set([
        "seccomp=unconfined",
        "apparmor=unconfined",
        "systempaths=unconfined",
        "no-new-privileges:true",
      ]),
    );
    expect(agentd["cap_drop"]).toEqual(["ALL"]);
    expect(agentd["cap_add"]).toBeUndefined();
    expect(agentd["privileged"]).toBeUndefined();
    expect(agentd["init"]).toBe(true);
    expect(agentd["volumes"]).toEqual(["agentd-data:/data", "agentd-workspaces:/app/.agentd"]);
    expect(parseDuration(String(agentd["stop_grace_period"]))).toBeGreaterThan(
      ConfigSchema.parse({}).shutdown.grace,
    );
  });

  it("has the same flags as the docker run line of the Dockerfile and of docs/deployment.md", () => {
    const flags = [
      "--security-opt seccomp=unconfined",
      "--security-opt apparmor=unconfined",
      "--security-opt systempaths=unconfined",
      "--security-opt no-new-privileges",
      "--cap-drop ALL",
      "--init",
      "-v agentd-data:/data",
      "-v agentd-workspaces:/app/.agentd",
    ];
    for (const text of [dockerfile, deployment]) {
      const run = /docker run [^`]*?agentd\n/.exec(text.replace(/\\\n#?\s*/g, " "))?.[0] ?? "";
      for (const flag of flags) expect({ flag, run: run.includes(flag) }).toEqual({ flag, run: true });
    }
  });
});
