import type { SandboxPolicy } from "./sandbox-policy.js";

/** The lists a policy looks up only when first read, each from the call that made it. */
export interface LazyPolicyLists {
  protected: () => string[];
  systemRead: () => string[];
  unmade: () => { paths: string[]; names: string[] };
}

/** A policy's fields worked out when it is made. */
export type EagerPolicyFields = Omit<SandboxPolicy, "protected" | "systemRead" | "unmade" | "unmadeNames">;

/**
 * One call's sandbox policy, its `protected`, `systemRead`, `unmade` and `unmadeNames` looked up
 * when first read (a read check needs none of them). The getters are the class's: an object
 * literal with getters of its own made V8 define each of them at run time, ~1.6 µs a policy, and
 * a policy is made for every tool call. Being the class's, they are not copied by a spread
 * (`{ ...policy }`): `policyWith` makes a changed copy.
 */
export class LazySandboxPolicy implements SandboxPolicy {
  mode: SandboxPolicy["mode"];
  network: SandboxPolicy["network"];
  workdir: string;
  hidden: string[];
  alwaysHidden: string[];
  read: string[];
  write: string[];
  unixSockets: string[];
  protectedHidden: string[];
  internal: string[];
  limits: SandboxPolicy["limits"];
  searchPath: string;
  owner: string;
  linkChecked: SandboxPolicy["linkChecked"];
  readonly #lazy: LazyPolicyLists;
  #protected: string[] | undefined;
  #systemRead: string[] | undefined;
  #unmade: { paths: string[]; names: string[] } | undefined;

  constructor(fields: EagerPolicyFields, lazy: LazyPolicyLists) {
    this.mode = fields.mode;
    this.network = fields.network;
    this.workdir = fields.workdir;
    this.hidden = fields.hidden;
    this.alwaysHidden = fields.alwaysHidden;
    this.read = fields.read;
    this.write = fields.write;
    this.unixSockets = fields.unixSockets;
    this.protectedHidden = fields.protectedHidden;
    this.internal = fields.internal;
    this.limits = fields.limits;
    this.searchPath = fields.searchPath;
    this.owner = fields.owner;
    this.linkChecked = fields.linkChecked;
    this.#lazy = lazy;
  }

  get protected(): string[] {
    return (this.#protected ??= this.#lazy.protected());
  }

  get systemRead(): string[] {
    return (this.#systemRead ??= this.#lazy.systemRead());
  }

  get unmade(): string[] {
    return (this.#unmade ??= this.#lazy.unmade()).paths;
  }

  get unmadeNames(): string[] {
    return (this.#unmade ??= this.#lazy.unmade()).names;
  }
}

/**
 * `policy` with some of the fields worked out when it was made changed (a spread would drop the
 * looked-up lists of a LazySandboxPolicy): those lists are read from `policy` when first read.
 */
export function policyWith(policy: SandboxPolicy, changes: Partial<EagerPolicyFields>): SandboxPolicy {
  return new LazySandboxPolicy(
    { ...policy, ...changes },
    {
      protected: () => policy.protected,
      systemRead: () => policy.systemRead ?? [],
      unmade: () => ({ paths: policy.unmade ?? [], names: policy.unmadeNames ?? [] }),
    },
  );
}
