/** What config `cli_tools.<claude|gemini|codex>` changes in a built-in adapter. */
export interface BuiltInAdapterOptions {
  /** Executable name or path instead of the tool's own name. */
  command?: string | undefined;
  /** Config `env`: the user's account, provider and config-folder variables. */
  environment?: Record<string, string> | undefined;
  /** Config `args`: default arguments after the adapter's own and before the agent's `cli.args`. */
  configArguments?: string[] | undefined;
}
