import type { ShellWord } from "./shell-reading.js";

/** Options of a listed program that are known harmless, grouped with the reason they are. */
export interface OptionGroup {
  reason: string;
  /** Options that take no value. */
  flags?: readonly string[];
  /** Options that take a value: the rest of a short bundle or the next word; `--name=value` or the next word. */
  values?: readonly string[];
  /** Options whose value can only be attached (`-U3`, `--color=always`), or that stand alone. */
  attached?: readonly string[];
}

/**
 * What the check knows about one listed program's options. Only the options in `harmless` pass;
 * any other option, an abbreviation that is ambiguous or names a listed risk, asks.
 */
export interface OptionTable {
  /** What an option outside the allow-list could make the program do. */
  risk: string;
  harmless: readonly OptionGroup[];
  /**
   * Long options known to run a command or load code, with why. They are never harmless; they are
   * listed so an abbreviation of one (`--filt` for `--filter`) is recognised as that option.
   */
  runs?: Readonly<Record<string, string>>;
  /** `-5` is a count (`git log -5`). */
  numeric?: boolean;
  /** `--no-<name>` negates a harmless long option (git's parse-options). */
  negatable?: boolean;
  /** The first argument may be a bundle of option letters without a dash (`tar xzf a.tgz`). */
  oldStyleBundle?: boolean;
  /** Options end at the first operand (git's global options before its subcommand). */
  stopAtOperand?: boolean;
  /** `-name` is one option, never a bundle of letters (`find`, `openssl`); no abbreviations. */
  singleDashLong?: boolean;
  /** A word starting with `+` is an option too (`less +cmd`), never harmless. */
  plusOptions?: boolean;
  /** Short options may be two letters (`zip -TT`, `-ll`): a bundle is matched two letters first. */
  multiLetterShorts?: boolean;
  /** Operands that make the program run a command (`ip netns exec`), with why. */
  runningOperands?: Readonly<Record<string, string>>;
}

/** A known option met in a command, with its value when it takes one. */
export interface ReadOption {
  /** The option as the table spells it (an abbreviation resolved): `--expression`, `-e`. */
  name: string;
  value: string | undefined;
}

/** The options and operands of one command, read against its program's table. */
export interface OptionReading {
  options: ReadOption[];
  /** Words that are not options (after `--`, every word). */
  operands: ShellWord[];
  /** The index of the first word not known harmless, and what it was read as. */
  unknown?: { index: number; option: string };
  /** Index of the first operand (the subcommand of `git`) when `stopAtOperand`. */
  firstOperand?: number;
}

/**
 * The entry of a data table under `key`, only when the table itself holds it: a program named
 * `constructor` or `toString` must not find what every object inherits.
 */
export function ownEntry<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** How an option takes its value, or undefined when the table does not list it as harmless. */
export function optionArity(table: OptionTable, name: string): Arity | undefined {
  const compiled = compile(table);
  return (
    name.startsWith("--") || (table.singleDashLong && name.length > 2) ? compiled.long : compiled.short
  ).get(name);
}

export type Arity = "flag" | "value" | "attached";

interface CompiledTable {
  short: Map<string, Arity>;
  long: Map<string, Arity>;
  /** Every long option the table names, harmless or not, for resolving abbreviations. */
  knownLong: string[];
}

const compiledTables = new WeakMap<OptionTable, CompiledTable>();

function compile(table: OptionTable): CompiledTable {
  const cached = compiledTables.get(table);
  if (cached) return cached;
  const short = new Map<string, Arity>();
  const long = new Map<string, Arity>();
  const add = (names: readonly string[] | undefined, arity: Arity) => {
    for (const name of names ?? []) {
      (name.startsWith("--") || (table.singleDashLong && name.length > 2) ? long : short).set(name, arity);
    }
  };
  for (const group of table.harmless) {
    add(group.flags, "flag");
    add(group.values, "value");
    add(group.attached, "attached");
  }
  const runs = Object.keys(table.runs ?? {}).filter((name) => name.startsWith("--"));
  const knownLong = [...new Set([...long.keys(), ...runs])].filter((name) => name.startsWith("--"));
  const compiled = { short, long, knownLong };
  compiledTables.set(table, compiled);
  return compiled;
}

/**
 * The long option `written` (without `=value`) stands for, GNU style: an exact name, or the one
 * known option it is a prefix of. Undefined when it names none or several.
 */
export function resolveLongOption(written: string, known: readonly string[]): string | undefined {
  if (known.includes(written)) return written;
  const candidates = known.filter((name) => name.startsWith(written));
  return candidates.length === 1 ? candidates[0] : undefined;
}

/**
 * Reads the words after a program name (`words[start…]`) as GNU `getopt_long` does: short options
 * bundled (`-rn`), a value attached or in the next word, long options by unique prefix, `--` ending
 * options, options mixed with operands. Reading stops at the first word that is not known harmless.
 */
export function readOptions(words: ShellWord[], table: OptionTable, start = 1): OptionReading {
  const compiled = compile(table);
  const options: ReadOption[] = [];
  const operands: ShellWord[] = [];
  const reading: OptionReading = { options, operands };
  const stop = (index: number, option: string): OptionReading => ({ ...reading, unknown: { index, option } });
  for (let index = start; index < words.length; index++) {
    const word = words[index] as ShellWord;
    const text = word.text;
    if (text === "--") {
      operands.push(...words.slice(index + 1));
      return reading;
    }
    const bundle = table.oldStyleBundle && index === start && /^[A-Za-z]+$/.test(text);
    if (table.plusOptions && text.startsWith("+")) return stop(index, text);
    if (!bundle && (!text.startsWith("-") || text === "-")) {
      const running = ownEntry(table.runningOperands, text);
      if (running !== undefined) return stop(index, text);
      if (table.stopAtOperand) {
        operands.push(...words.slice(index));
        return { ...reading, firstOperand: index };
      }
      operands.push(word);
      continue;
    }
    if (text.startsWith("--")) {
      const equals = text.indexOf("=");
      const written = equals === -1 ? text : text.slice(0, equals);
      const { name, arity } = longOption(written, compiled, table);
      if (name === undefined || arity === undefined) return stop(index, name ?? written);
      if (arity === "flag" && equals !== -1) return stop(index, name);
      let value = equals === -1 ? undefined : text.slice(equals + 1);
      if (arity === "value" && value === undefined) value = words[++index]?.text;
      options.push({ name, value });
      continue;
    }
    if (table.singleDashLong) {
      const arity = optionArity(table, text);
      if (arity === undefined) return stop(index, text);
      options.push({ name: text, value: arity === "value" ? words[++index]?.text : undefined });
      continue;
    }
    if (table.numeric && /^-[0-9]+$/.test(text)) {
      options.push({ name: "-<number>", value: text.slice(1) });
      continue;
    }
    // A bundle of letters: each is an option; one that takes a value takes the rest of the bundle.
    const letters = bundle ? text : text.slice(1);
    let pendingValues = 0;
    for (let at = 0; at < letters.length; at++) {
      let name = `-${letters[at] as string}`;
      const pair = `${name}${letters[at + 1] ?? ""}`;
      if (table.multiLetterShorts && pair.length === 3) {
        if (ownEntry(table.runs, pair) !== undefined) return stop(index, pair);
        if (compiled.short.has(pair)) {
          name = pair;
          at++;
        }
      }
      const arity = compiled.short.get(name);
      if (arity === undefined) return stop(index, name);
      if (arity === "flag") {
        options.push({ name, value: undefined });
        continue;
      }
      const rest = letters.slice(at + 1);
      if (bundle && arity === "value") {
        // `tar xzfC a.tgz dir`: each letter that takes a value takes the next word, in order.
        pendingValues++;
        options.push({ name, value: words[index + pendingValues]?.text });
        continue;
      }
      if (rest.length > 0 || arity === "attached") {
        options.push({ name, value: rest.length > 0 ? rest : undefined });
        break;
      }
      options.push({ name, value: words[++index]?.text });
      break;
    }
    index += pendingValues;
  }
  return reading;
}

function longOption(
  written: string,
  compiled: CompiledTable,
  table: OptionTable,
): { name: string | undefined; arity: Arity | undefined } {
  const name = resolveLongOption(written, compiled.knownLong);
  if (name !== undefined || !table.negatable || !written.startsWith("--no-")) {
    return { name, arity: name === undefined ? undefined : compiled.long.get(name) };
  }
  // `--no-verify` negates `--verify`; an abbreviation must still name one known option.
  const positive = resolveLongOption(`--${written.slice(5)}`, compiled.knownLong);
  if (positive === undefined) return { name: undefined, arity: undefined };
  const arity = compiled.long.get(positive);
  return { name: `--no-${positive.slice(2)}`, arity: arity === undefined ? undefined : "flag" };
}
