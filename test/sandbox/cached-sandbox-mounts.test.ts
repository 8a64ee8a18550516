import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cachedSandboxMounts, layeredAccess } from "../../src/sandbox/cached-sandbox-mounts.js";
import { accessOf, sandboxMounts } from "../../src/sandbox/sandbox-mounts.js";
import type { SandboxPolicy } from "../../src/sandbox/sandbox-policy.js";
import { DEFAULT_SANDBOX_LIMITS } from "../../src/config/sandbox-settings.js";

// Not under /tmp: the sandbox's /tmp is private, so everything in it counts as hidden.
const root = realpathSync(mkdtempSync("/var/tmp/agentd-cached-mounts-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A policy as policyFor makes them, over folders of `root`. */
function policyOf(protectedPaths: string[]): SandboxPolicy {
  const workdir = path.join(root, "work");
  return {
    mode: "workspace-write",
    network: { kind: "none" },
    workdir,
    hidden: [path.join(root, "data"), path.join(root, "link")],
    alwaysHidden: [path.join(root, "data")],
    read: [],
    write: [],
    unixSockets: [],
    protected: protectedPaths,
    protectedHidden: [path.join(root, "data"), path.join(workdir, ".env")],
    internal: [],
    limits: DEFAULT_SANDBOX_LIMITS,
    searchPath: "",
    owner: 'agent "cached"',
  };
}

describe("cachedSandboxMounts", () => {
  it("gives the layers sandboxMounts gives, made again whenever a path or where it leads changes", () => {
    const workdir = path.join(root, "work");
    mkdirSync(workdir);
    mkdirSync(path.join(root, "data"));
    mkdirSync(path.join(root, "elsewhere"));
    symlinkSync(path.join(root, "data"), path.join(root, "link"));
    const npmrc = path.join(workdir, ".npmrc");
    const env = path.join(workdir, ".env");

    const first = cachedSandboxMounts(policyOf([]));
    expect(first).toEqual(sandboxMounts(policyOf([])));
    // A new policy object with the same content and the same files: the same layers.
    expect(cachedSandboxMounts(policyOf([]))).toBe(first);
    expect(accessOf(first, env)).toBe("writable");

    // A protected file that appears (policyFor lists it once it exists): read-only from then on.
    writeFileSync(npmrc, "registry=x\n");
    const protectedNow = cachedSandboxMounts(policyOf([npmrc]));
    expect(accessOf(protectedNow, npmrc)).toBe("read-only");

    // A hidden path the policy named before it existed: hidden as soon as it exists.
    writeFileSync(env, "TOKEN=x\n");
    const envHidden = cachedSandboxMounts(policyOf([npmrc]));
    expect(envHidden).not.toBe(protectedNow);
    expect(accessOf(envHidden, env)).toBe("hidden");

    // A symlink of the policy pointed elsewhere: its new target is what is hidden.
    rmSync(path.join(root, "link"));
    symlinkSync(path.join(root, "elsewhere"), path.join(root, "link"));
    const relinked = cachedSandboxMounts(policyOf([npmrc]));
    expect(relinked).toEqual(sandboxMounts(policyOf([npmrc])));
    expect(accessOf(relinked, path.join(root, "elsewhere"))).toBe("hidden");
    expect(accessOf(envHidden, path.join(root, "elsewhere"))).toBe("read-only");

    // The string comparison of layeredAccess decides as accessOf's isWithin does.
    const probes = [
      "/",
      "/tmp/x",
      root,
      `${root}/`,
      `${root}/work`,
      `${root}/workshop`,
      `${root}/work/.npmrc`,
      `${root}/work/./.env`,
      `${root}/work/sub/../.env`,
      `${root}/work/..b`,
      `${root}/elsewhere/deep/file`,
      `${root}/data`,
      `${root}/dat`,
    ];
    for (const probe of probes) {
      expect([probe, layeredAccess(relinked, probe)]).toEqual([probe, accessOf(relinked, probe)]);
    }
  });
});
