import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  SandboxOverrideSchema,
  SandboxSettingsSchema,
  mergeSandboxSettings,
} from "../../src/config/sandbox-settings.js";
import { agentSandboxView, sandboxView } from "../../src/sandbox/sandbox-view.js";
import { SandboxProject } from "./sandbox-project.js";
import { DEFAULT_SANDBOX_LIMITS } from "../../src/config/sandbox-settings.js";

let project: SandboxProject;
afterEach(() => project.dispose());

/** Agent `me`'s view with this `sandbox:` over the defaults. */
function viewOf(override?: unknown) {
  const settings = mergeSandboxSettings(
    SandboxSettingsSchema.parse({}),
    override === undefined ? undefined : SandboxOverrideSchema.parse(override),
    project.root,
  );
  return agentSandboxView(project.host(), { id: "me", sandbox: settings, workdir: project.workdir });
}

describe("sandboxView", () => {
  it("groups the layers' paths by what a child sees: workdir writable, / read-only, secrets hidden, /tmp private", () => {
    project = new SandboxProject();
    const view = viewOf();
    expect(view).toMatchObject({
      writable: ["/tmp", project.workdir],
      read_only: ["/"],
      private: ["/tmp"],
      network: "none",
    });
    // The config folder, data_dir, $HOME and the other workspaces (the account's home too).
    const hidden = ["etc", "data", "home", ".agentd/workspaces"].map((entry) =>
      path.join(project.root, entry),
    );
    expect(view?.hidden).toEqual(expect.arrayContaining(hidden));
    expect(view?.hidden).toEqual([...(view?.hidden ?? [])].sort());
  });

  it("shows a read-only workdir, extra paths inside a hidden folder, and the hosts", () => {
    project = new SandboxProject();
    const view = viewOf({
      mode: "read-only",
      network: ["api.github.com", "*.npmjs.org:443", "[::1]:8080"],
      read: [path.join(project.home, ".config")],
      write: [project.outside],
    });
    expect(view?.read_only).toEqual(["/", project.workdir, path.join(project.home, ".config")].sort());
    expect(view?.writable).toEqual(["/tmp", project.outside]);
    expect(view?.hidden).toContain(project.home);
    expect(view?.network).toEqual(["api.github.com", "*.npmjs.org:443", "[::1]:8080"]);
  });

  it("leaves out a layer that changes nothing, and lists a secret a bind would reveal as hidden", () => {
    project = new SandboxProject();
    const view = viewOf({ read: ["/usr", project.root] });
    // Both are read-only under / anyway; the secret places a bind of the project would reveal —
    // the home, the config folder, data_dir — are hidden again over it.
    expect(view?.read_only).toEqual(["/"]);
    expect(view?.hidden).toContain(project.home);
    expect(view?.hidden).toContain(path.join(project.root, "etc"));
    expect(view?.hidden).toContain(project.dataDirectory);
  });

  it("is null with mode off: nothing is fenced", () => {
    project = new SandboxProject();
    expect(viewOf("off")).toBeNull();
    const policy = project.host().policyFor({
      settings: {
        mode: "off",
        network: "all",
        read: [],
        write: [],
        unix_sockets: [],
        limits: DEFAULT_SANDBOX_LIMITS,
      },
      workdir: project.workdir,
      owner: 'agent "me"',
    });
    expect(sandboxView(policy)).toBeNull();
  });
});
