import { execFileSync } from "node:child_process";
import { existsSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { getRun, runEvents, startRun, waitForRunEnd } from "./api-shapes.js";

const kit = useTestKit();

/** The kernel exempts root from the process limit: the daemon runs as `nobody`, as a packaged one runs as its own user. */
const NOBODY = { uid: 65534, gid: 65534 };

/**
 * A bounded fork bomb: 200 children that sleep (a minute; they die with the call's sandbox), a
 * report of the forks refused, a marker file, then a wait until the test lets it end.
 */
const BOMB = `
my ($made, $refused, $why) = (0, 0, "");
for (1 .. 200) {
  my $pid = fork;
  if (!defined $pid) { $refused++; $why = "$!"; next }
  if ($pid == 0) { sleep 60; exit 0 }
  $made++;
}
print "forked $made, refused $refused: $why\\n";
open my $marker, ">", "forked"; close $marker;
sleep 1 until -e "release";
`;

describe("a fork bomb in an agent's shell call, on a daemon run as an unprivileged user", () => {
  it("has its forks past limits.processes refused, says so in the call's output, and /health answers meanwhile", async () => {
    const { project, llm } = await kit.scriptedProject(textReply("done"), {
      // Outside /tmp, which is private in a sandbox and would hide the project by accident.
      parent: realpathSync("/var/tmp"),
      config: { sandbox: { limits: { processes: 64 } } },
    });
    project.writeAgent("bomber", { workdir: ".", tools: ["shell"], permissions: { allow: ["shell"] } });
    writeFileSync(path.join(project.root, "bomb.pl"), BOMB);
    execFileSync("chown", ["-R", `${String(NOBODY.uid)}:${String(NOBODY.gid)}`, project.root]);
    llm.enqueue(toolCallReply({ name: "shell", arguments: { command: "perl bomb.pl" } }), textReply("done"));
    const daemon = await kit.daemon(project.configFile, {
      user: NOBODY,
      environment: { HOME: project.root },
    });

    const run = await startRun(daemon, "bomber", "fork");
    await waitFor(
      () => existsSync(path.join(project.root, "forked")) || undefined,
      "the bomb to have forked",
    );
    // The bomb holds every process it may: the daemon still serves.
    const health = await daemon.request("GET", "/health");
    expect(health.status).toBe(200);
    expect((await getRun(daemon, run)).status).toBe("running");
    writeFileSync(path.join(project.root, "release"), "");

    expect((await waitForRunEnd(daemon, run)).status).toBe("completed");
    const observation = (await runEvents(daemon, run)).find((event) => event.type === "observation");
    const output = String((observation?.data as { output?: unknown } | undefined)?.output);
    const [, made, refused] =
      /forked (\d+), refused (\d+): Resource temporarily unavailable/.exec(output) ?? [];
    expect(Number(refused), output).toBeGreaterThan(100);
    expect(Number(made), output).toBeLessThan(64);
  });
});
