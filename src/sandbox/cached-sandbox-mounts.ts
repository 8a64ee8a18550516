import path from "node:path";
import {
  type ExtraBinds,
  type MountAccess,
  type SandboxMount,
  existingRealPath,
  sandboxMounts,
} from "./sandbox-mounts.js";
import type { SandboxPolicy } from "./sandbox-policy.js";
import { isWithinResolved } from "../util/path-within.js";

/** Distinct layer sets kept: a daemon's agents have a few policies each, not hundreds. */
const KEPT_LAYER_SETS = 64;

/** Layers by everything they were computed from (see layerKey), least recently used first. */
const layersByKey = new Map<string, readonly SandboxMount[]>();

/** Real paths found while a policy was made (keepResolutions), until its layers are first worked out. */
const resolutionsByPolicy = new WeakMap<SandboxPolicy, Map<string, string | undefined>>();

/**
 * Hands the real paths `policyFor` found while making `policy` (its socket places, its read and
 * write entries) to the first working-out of its layers, in the same tool call: each path is then
 * resolved once per call for both, not once for the policy and again for its layers. Used once:
 * a later working-out of the same policy resolves every path afresh.
 */
export function keepResolutions(policy: SandboxPolicy, resolved: Map<string, string | undefined>): void {
  resolutionsByPolicy.set(policy, resolved);
}

/**
 * The real paths found so far in the call that made `policy` (its workdir's among them), for a
 * check of the same call that would resolve one of them again; undefined once its layers were
 * worked out. Never for another call: each call makes its own policy.
 */
export function resolvedInCall(policy: SandboxPolicy): ReadonlyMap<string, string | undefined> | undefined {
  return resolutionsByPolicy.get(policy);
}

/**
 * Sets where `resolutions`' paths lead for the next working-out of `policy`'s layers (over what
 * keepResolutions kept): the real paths of the descriptors a child's binds hold, so that its
 * layers bind exactly those (HeldBindSources).
 */
export function pinResolutions(
  policy: SandboxPolicy,
  resolutions: ReadonlyMap<string, string | undefined>,
): void {
  const kept = resolutionsByPolicy.get(policy) ?? new Map<string, string | undefined>();
  for (const [entry, real] of resolutions) kept.set(entry, real);
  resolutionsByPolicy.set(policy, kept);
}

const NO_EXTRA: ExtraBinds = { read: [], write: [] };

/**
 * The layers of a policy (`sandboxMounts`, with a child's extra binds), computed once for each set
 * of inputs: for the file tools' checks and for bubblewrap's arguments. A file tool call makes a new policy, and laying out some forty paths (which holds which,
 * what is pinned, what opens past what) every call was a tenth of a tool call's cost; the layers
 * are a pure function of the policy's lists and of where each path really is, so every path is
 * still resolved with realpath(3) on every call (once, shared with policyFor: keepResolutions), and any change (a file that appeared, a symlink
 * that points elsewhere, a new protected path) is a new key and new layers.
 */
export function cachedSandboxMounts(
  policy: SandboxPolicy,
  extra: ExtraBinds = NO_EXTRA,
): readonly SandboxMount[] {
  const resolved = resolutionsByPolicy.get(policy) ?? new Map<string, string | undefined>();
  resolutionsByPolicy.delete(policy);
  return cachedLayers(
    policy,
    extra,
    { protectedPaths: policy.protected, systemRead: policy.systemRead ?? [] },
    resolved,
  );
}

/**
 * The layers of a policy without its protected paths and its system reads, for a read check:
 * protected layers only turn what they cover read-only (the protected hidden paths after them are
 * hidden either way), and a system read (resolv.conf in a socket place) is one more read-only
 * bind, which shows and never hides; so a path these layers show, the policy's show too; only a
 * path they hide needs the policy's own layers (a protected path may show a part of a hidden
 * folder). A read that these layers allow never works out either (policyFor makes them when first
 * read). The real paths policyFor found stay for the policy's own layers, if the same call needs
 * them.
 */
export function readLayersOf(policy: SandboxPolicy): readonly SandboxMount[] {
  const resolved = resolutionsByPolicy.get(policy) ?? new Map<string, string | undefined>();
  return cachedLayers(policy, NO_EXTRA, NO_DEFERRED_LISTS, resolved);
}

/** The lists of a policy looked up when first read, which a read check leaves out (readLayersOf). */
interface DeferredLists {
  protectedPaths: readonly string[];
  systemRead: readonly string[];
}

const NO_DEFERRED_LISTS: DeferredLists = { protectedPaths: [], systemRead: [] };

function cachedLayers(
  policy: SandboxPolicy,
  extra: ExtraBinds,
  lists: DeferredLists,
  resolved: Map<string, string | undefined>,
): readonly SandboxMount[] {
  const inputs = layerInputs(policy, extra, lists, resolved);
  // The usual call repeats the last one's inputs: compared as they are, with no key to build.
  if (lastUsed !== undefined && sameInputs(inputs, lastUsed.inputs)) return lastUsed.layers;
  const key = inputs.join("");
  let layers = layersByKey.get(key);
  if (layers === undefined) {
    // Every layer's path as path.resolve writes it (real paths are already): layeredAccess relies on it.
    layers = sandboxMounts(policy, extra, resolved, lists.protectedPaths, lists.systemRead).map((mount) => ({
      ...mount,
      path: path.resolve(mount.path),
    }));
    if (layersByKey.size >= KEPT_LAYER_SETS) {
      const oldest = layersByKey.keys().next();
      if (oldest.done !== true) layersByKey.delete(oldest.value);
    }
  } else {
    layersByKey.delete(key);
  }
  layersByKey.set(key, layers);
  lastUsed = { inputs, layers };
  return layers;
}

/** The inputs and layers of the last call (the most recently used set of layersByKey). */
let lastUsed: { inputs: readonly string[]; layers: readonly SandboxMount[] } | undefined;

function sameInputs(left: readonly string[], right: readonly string[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index += 1) {
    if (left[index] !== right[index]) return false;
  }
  return true;
}

/**
 * What `sandboxMounts` reads of a policy and the extra binds, each path with its real path (or
 * none): its mode, then every list in order, as the parts of a key (joined, they are the key of
 * layersByKey). NUL cannot occur in a path, so no two inputs make the same key.
 */
function layerInputs(
  policy: SandboxPolicy,
  extra: ExtraBinds,
  { protectedPaths, systemRead }: DeferredLists,
  resolved: Map<string, string | undefined>,
): string[] {
  const lists = [
    [policy.workdir],
    policy.read,
    systemRead,
    policy.write,
    policy.hidden,
    policy.alwaysHidden,
    protectedPaths,
    policy.protectedHidden,
    policy.internal,
    extra.read,
    extra.write,
  ];
  const inputs: string[] = [policy.mode];
  for (const list of lists) {
    inputs.push("\u0000\u0002");
    for (const entry of list) {
      inputs.push("\u0000\u0001", entry, "\u0000", existingRealPath(entry, resolved) ?? "");
    }
  }
  return inputs;
}

/**
 * `accessOf` for layers from cachedSandboxMounts, whose paths are written as path.resolve writes
 * them: the path is resolved once and compared with each layer as a string (a layer holds it when
 * it is the layer's path or starts with it and a `/`), which is what isWithin decides for such
 * paths, without resolving both again for every layer of every check.
 */
export function layeredAccess(layers: readonly SandboxMount[], realPath: string): MountAccess {
  const target = path.resolve(realPath);
  for (let index = layers.length - 1; index >= 0; index -= 1) {
    const layer = layers[index] as SandboxMount;
    if (!isWithinResolved(target, layer.path)) continue;
    return layer.private ? "hidden" : layer.access;
  }
  return "hidden";
}
