/** Root options that take a value: their value is not the command's name. */
const ROOT_OPTIONS_WITH_VALUE = new Set(["--config"]);

/** The command a command line names: its first operand (`help run` names `run`), past the root options. */
export function requestedCommand(args: readonly string[]): string | undefined {
  const operands: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? "";
    if (ROOT_OPTIONS_WITH_VALUE.has(arg)) index += 1;
    else if (!arg.startsWith("-")) operands.push(arg);
    if (operands.length > 0 && operands[0] !== "help") break;
    if (operands.length > 1) break;
  }
  return operands[0] === "help" ? operands[1] : operands[0];
}
