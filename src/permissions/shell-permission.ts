import { type RuleSet, ruleMatches } from "./permission-rule.js";
import { type ShellWord, parseShellScript } from "./shell-lexer.js";
import {
  SENSITIVE_VARIABLES,
  SHELL_KEYWORDS,
  declaresSomethingRisky,
  programKind,
  readsStartupFiles,
  setsSensitiveVariable,
  programName,
  runsUnreadableCode,
  shellScriptArgument,
  wrappedCommand,
} from "./shell-programs.js";

/**
 * How one part of a command fares. `unlisted` is an ask that an explicit allow rule of a wrapper may
 * lift (`allow: shell(sudo *)`); `ask` is a rule or a doubt, which nothing lifts but an approval.
 */
interface Finding {
  level: "deny" | "ask" | "unlisted" | "allow";
  reason: string;
  /** From a deny or ask rule (kept when a part is only looked at speculatively). */
  fromRule: boolean;
}

/** What the shell permission check decides, and why, in words a user reads in an event. */
export interface ShellVerdict {
  decision: "allow" | "ask" | "deny";
  reason: string;
}

const SEVERITY = { allow: 0, unlisted: 1, ask: 2, deny: 3 } as const;
/** `a[i]=…` with a name in the index: bash evaluates it as arithmetic. */
const EVALUATED_SUBSCRIPT = /^[A-Za-z_][A-Za-z0-9_]*\[[^\]]*[A-Za-z_$`]/;
const MAX_DEPTH = 12;
const MAX_ANALYSES = 4_000;
const ALLOWED: Finding = { level: "allow", reason: "allowed", fromRule: false };

function worst(findings: Finding[]): Finding {
  return findings.reduce(
    (current, finding) => (SEVERITY[finding.level] > SEVERITY[current.level] ? finding : current),
    ALLOWED,
  );
}

/**
 * Checks a shell command against the `shell(...)` rules after parsing it the way bash would: every
 * simple command anywhere in it (after `;`, `&&`, `|`, inside `$(…)`, `bash -c`, `eval`, wrappers
 * such as `env`, `sudo`, `xargs`) must be allowed for the whole to be; any part that meets a deny rule
 * denies the whole; anything not analysable with confidence is `ask` at best.
 */
export class ShellPermissionCheck {
  readonly #rules: RuleSet;
  #budget = MAX_ANALYSES;

  /** `rules`: the rules whose tool is `shell`. */
  constructor(rules: RuleSet) {
    this.#rules = rules;
  }

  check(command: string): ShellVerdict {
    this.#budget = MAX_ANALYSES;
    const raw = command.trim();
    const rawDeny = this.#rules.deny.find((rule) => ruleMatches(rule, raw, true));
    if (rawDeny) return { decision: "deny", reason: `denied by ${rawDeny.source}` };
    const unrestricted =
      this.#rules.deny.length === 0 &&
      this.#rules.ask.length === 0 &&
      this.#rules.allow.some((rule) => rule.pattern === undefined);
    if (unrestricted) return { decision: "allow", reason: "allowed: every shell command is allowed" };
    const finding = this.#script(command, 0, false);
    const decision = finding.level === "unlisted" ? "ask" : finding.level;
    return { decision, reason: finding.reason };
  }

  #script(script: string, depth: number, speculative: boolean): Finding {
    const parsed = parseShellScript(script);
    const findings = parsed.commands.map((command) => this.#command(command.words, depth, speculative));
    if (!speculative) {
      for (const doubt of parsed.doubts) findings.push(this.#doubt(`the command has ${doubt}`));
    }
    if (parsed.commands.length === 0 && !speculative) {
      findings.push({ level: "unlisted", reason: "the command runs nothing", fromRule: false });
    }
    return this.#conclude(findings, speculative);
  }

  #command(allWords: ShellWord[], depth: number, speculative: boolean): Finding {
    if (--this.#budget < 0 || depth > MAX_DEPTH) {
      return speculative ? ALLOWED : this.#doubt("the command is too complex to analyse");
    }
    const findings: Finding[] = [];
    let words = allWords;
    while (words[0] && SHELL_KEYWORDS.has(words[0].text)) {
      // `[[ x -eq 1 ]]` evaluates the variable x's value as arithmetic, which can run commands.
      if (words[0].text === "[[")
        findings.push(this.#doubt("a [[ … ]] test, which may evaluate variables as code"));
      words = words.slice(1);
    }
    const first = words[0]?.text;
    if (first === "for" || first === "select" || first === "function") return ALLOWED;
    if (first === "case") return this.#conclude([this.#doubt("a case statement")], speculative);
    while (words[0]?.assignment !== undefined) {
      const name = words[0].assignment;
      if (SENSITIVE_VARIABLES.has(name)) findings.push(this.#doubt(`it sets ${name}`));
      if (EVALUATED_SUBSCRIPT.test(words[0].text)) {
        findings.push(this.#doubt(`it assigns ${name}[…], whose index may evaluate variables as code`));
      }
      words = words.slice(1);
    }
    const nameWord = words[0];
    if (!nameWord) return this.#conclude(findings, speculative);

    const program = programName(nameWord.text);
    const texts = words.map((word) => word.text);
    const candidates = [[program, ...texts.slice(1)].join(" "), texts.join(" ")];
    const denied = this.#rules.deny.find((rule) => candidates.some((text) => ruleMatches(rule, text, true)));
    if (denied) return { level: "deny", reason: `denied by ${denied.source}`, fromRule: true };
    const asked = this.#rules.ask.find((rule) => candidates.some((text) => ruleMatches(rule, text, true)));
    if (asked) findings.push({ level: "ask", reason: `${asked.source} asks`, fromRule: true });
    if (nameWord.dynamic || nameWord.glob) {
      findings.push(this.#doubt(`the program name ${nameWord.text} is only known at run time`));
    }
    const dynamicArgument = words.slice(1).find((word) => word.dynamic);
    if (dynamicArgument) {
      findings.push(this.#doubt(`the argument ${dynamicArgument.text} is only known at run time`));
    }
    const outerAllowed = this.#rules.allow.some((rule) =>
      candidates.some((text) => ruleMatches(rule, text, false)),
    );
    findings.push(this.#byProgram(words, program, outerAllowed, depth, speculative));
    return this.#conclude(findings, speculative);
  }

  #byProgram(
    words: ShellWord[],
    program: string,
    outerAllowed: boolean,
    depth: number,
    speculative: boolean,
  ): Finding {
    const own: Finding = outerAllowed
      ? ALLOWED
      : { level: "unlisted", reason: `${program} is not in the allow rules`, fromRule: false };
    const liftedBy = (inner: Finding): Finding =>
      inner.level === "unlisted" && outerAllowed ? ALLOWED : inner;
    switch (programKind(program)) {
      case "shell": {
        const script = shellScriptArgument(words);
        if (script === undefined) return this.#doubt(`${program} runs a script the check cannot read`);
        const inner = liftedBy(this.#script(script, depth + 1, speculative));
        if (!readsStartupFiles(words)) return inner;
        return worst([this.#doubt(`${program} runs startup files (~/.bashrc, ~/.profile) first`), inner]);
      }
      case "eval":
        return liftedBy(this.#script(this.#texts(words.slice(1)), depth + 1, speculative));
      case "transparent": {
        const variable = setsSensitiveVariable(words);
        if (variable !== undefined) {
          return worst([this.#doubt(`it sets ${variable}`), this.#speculate(words, depth)]);
        }
        const inner = wrappedCommand(words);
        if (!inner) return worst([own, this.#speculate(words, depth)]);
        return liftedBy(this.#command(inner, depth + 1, speculative));
      }
      case "opaque":
        return worst([own, this.#speculate(words, depth)]);
      case "interpreter":
        if (!runsUnreadableCode(words)) return own;
        return worst([
          this.#doubt(`${program} runs code the check cannot read`),
          this.#speculate(words, depth),
        ]);
      case "state":
        return worst([
          this.#doubt(`${program} changes how later commands run`),
          this.#speculate(words, depth),
        ]);
      case "declaration":
        return declaresSomethingRisky(words) ? this.#doubt(`${program} changes how commands are found`) : own;
      case "plain":
        return own;
    }
  }

  /** Looks at every later word as the start of a command and as a script, for deny and ask rules. */
  #speculate(words: ShellWord[], depth: number): Finding {
    const findings: Finding[] = [];
    for (let index = 1; index < words.length; index++) {
      findings.push(this.#command(words.slice(index), depth + 1, true));
      const text = (words[index] as ShellWord).text;
      const assigned = /^[A-Za-z_][A-Za-z0-9_]*=([\s\S]*)$/.exec(text)?.[1];
      findings.push(this.#script(assigned ?? text, depth + 1, true));
      if (findings.some((finding) => finding.level === "deny")) break;
    }
    return worst(findings);
  }

  #texts(words: ShellWord[]): string {
    return words.map((word) => word.text).join(" ");
  }

  #doubt(reason: string): Finding {
    return { level: "ask", reason: `asks because ${reason}`, fromRule: false };
  }

  /** The worst finding; a speculative look keeps only what deny and ask rules say. */
  #conclude(findings: Finding[], speculative: boolean): Finding {
    return worst(speculative ? findings.filter((finding) => finding.fromRule) : findings);
  }
}
