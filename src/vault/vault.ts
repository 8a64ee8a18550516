/** Where secrets live. Three backends: an encrypted file, the OS keychain, environment variables. */
export interface Vault {
  /** Which backend this is: "file", "keychain" or "env". */
  readonly backend: string;
  /** The value, or undefined when no secret has this name. */
  get(name: string): Promise<string | undefined>;
  /**
   * The values of `names` it has, in one read where the backend keeps every secret in one place
   * (the file vault decrypts its whole file for each `get`). Without it, read-secrets.ts asks one
   * name at a time.
   */
  getMany?(names: readonly string[]): Promise<Map<string, string>>;
  /** `signal` ends a write still waiting for another writer (the file backend's lock). */
  set(name: string, value: string, signal?: AbortSignal): Promise<void>;
  /** Returns whether a secret was removed. */
  remove(name: string, signal?: AbortSignal): Promise<boolean>;
  /** Secret names, sorted. Never values. */
  list(): Promise<string[]>;
}
