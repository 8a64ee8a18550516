import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadDefinitions } from "../../src/definitions/load-definitions.js";
import { agentText, createTempProject, type TempProject } from "../support/temp-project.js";

describe("an agent file asking for looser sandbox limits than config's", () => {
  let project: TempProject;
  afterEach(() => project.remove());

  it("loads with config's limits and a warning naming the line, what was asked, what applies and why", async () => {
    project = createTempProject({ config: { sandbox: { limits: { processes: 512, nice: 10 } } } });
    project.writeAgent(
      "greedy.md",
      agentText("greedy", "sandbox:\n  limits:\n    processes: 4096\n    nice: 0\n"),
    );
    const snapshot = await loadDefinitions(project.config);

    const greedy = snapshot.get("greedy");
    expect(greedy?.sandbox.limits).toEqual({ processes: 512, nice: 10 });
    const file = path.join(project.agentsDirectory, "greedy.md");
    expect(greedy?.warnings).toEqual([
      expect.stringMatching(
        new RegExp(`^${file}:5 sandbox\\.limits\\.processes: 4096 is ignored, 512 applies .*only narrow`),
      ),
      expect.stringMatching(
        new RegExp(`^${file}:6 sandbox\\.limits\\.nice: 0 is ignored, 10 applies .*config\\.yaml`),
      ),
    ]);
    // What `agentd validate` and GET /agents list: the agent's status.
    expect(snapshot.agents.find((agent) => agent.id === "greedy")?.warnings).toHaveLength(2);
  });

  it("says nothing for limits that narrow config's or equal them", async () => {
    project = createTempProject({ config: { sandbox: { limits: { processes: 512, nice: 10 } } } });
    project.writeAgent(
      "narrow.md",
      agentText("narrow", "sandbox: { limits: { processes: 64, nice: 19 } }\n"),
    );
    project.writeAgent("same.md", agentText("same", "sandbox: { limits: { processes: 512, nice: 10 } }\n"));
    project.writeAgent("off.md", agentText("off", "sandbox: { mode: read-only }\n"));
    const snapshot = await loadDefinitions(project.config);

    expect(snapshot.get("narrow")?.sandbox.limits).toEqual({ processes: 64, nice: 19 });
    for (const id of ["narrow", "same", "off"]) expect(snapshot.get(id)?.warnings, id).toEqual([]);
  });
});
