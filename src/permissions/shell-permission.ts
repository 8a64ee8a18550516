import { SECRET_TEMPLATE } from "../secrets/secret-template.js";
import { type PermissionRule, type RuleSet, ruleMatches } from "./permission-rule.js";
import { INTEGER_VARIABLES, arithmeticDoubts } from "./shell-arithmetic.js";
import { commandKind, isSensitiveVariable, isUnknownPath, programBaseName } from "./shell-command-kind.js";
import { GLOB_SAFE_PROGRAMS } from "./shell-program-table.js";
import { type ShellAssignment, type ShellWord, readShell } from "./shell-reading.js";

/**
 * How one part of a command fares. `unlisted` is an ask that an allow rule of a wrapper around it
 * may lift (`allow: shell(sudo apt *)`); `ask` is a rule or a doubt.
 */
interface Finding {
  level: "deny" | "ask" | "unlisted" | "allow";
  reason: string;
  /** From a deny or ask rule (the only findings a speculative look keeps). */
  fromRule: boolean;
  /** For a doubt: the start of the command an allow rule must spell out to lift it. */
  construct?: string;
}

/** What the shell permission check decides, and why, in words a user reads in an event. */
export interface ShellVerdict {
  decision: "allow" | "ask" | "deny";
  reason: string;
}

const SEVERITY = { allow: 0, unlisted: 1, ask: 2, deny: 3 } as const;
const MAX_DEPTH = 12;
/** Commands looked at per check: wrappers of wrappers (`sudo sudo …`) branch at every word. */
const MAX_ANALYSES = 4_000;
const ALLOWED: Finding = { level: "allow", reason: "allowed", fromRule: false };

function worst(findings: Finding[]): Finding {
  return findings.reduce(
    (current, finding) => (SEVERITY[finding.level] > SEVERITY[current.level] ? finding : current),
    ALLOWED,
  );
}

/**
 * Checks a shell command against the `shell(...)` rules on one bash parse. It fails closed: a
 * command is allowed only when it parses without error into plain simple commands (words, quotes,
 * redirections to files) joined by `;`, `&&`, `||`, `|`, `&`, each allowed by a rule. Anything
 * else — an expansion, a function, a loop, a nested shell or interpreter, a program that runs
 * commands from its options, stdin or a file, a program given by a path the command may have
 * written — is `ask` at best, unless an allow rule spells that construct out. Every command found
 * anywhere (also inside substitutions, `bash -c`, `eval`, after wrappers, and every later word of a
 * runner) meets the deny and ask rules: deny beats everything.
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
    const reading = readShell(command);
    const joined = reading.joined === undefined ? ALLOWED : this.#script(reading.joined, 0, true);
    const finding = worst([this.#script(command, 0, false), joined]);
    const lifted = finding.level === "ask" && !finding.fromRule && this.#exactlyAllowed(raw);
    if (lifted) return { decision: "allow", reason: `allowed by an allow rule naming this exact command` };
    const decision = finding.level === "unlisted" ? "ask" : finding.level;
    return { decision, reason: finding.reason };
  }

  /** An allow rule with no `*` that matches the whole command names it exactly, construct and all. */
  #exactlyAllowed(raw: string): boolean {
    return this.#rules.allow.some(
      (rule) => rule.pattern !== undefined && !rule.pattern.includes("*") && ruleMatches(rule, raw, false),
    );
  }

  #script(script: string, depth: number, speculative: boolean): Finding {
    const reading = readShell(script);
    const findings = reading.commands.map((command) =>
      this.#command(command.words, command.assignments, depth, speculative),
    );
    if (!speculative) {
      for (const doubt of reading.doubts) findings.push(this.#doubt(`the command has ${doubt}`));
      if (reading.commands.length === 0) {
        findings.push({ level: "unlisted", reason: "the command runs nothing", fromRule: false });
      }
    }
    return this.#conclude(findings, speculative);
  }

  #command(words: ShellWord[], assignments: ShellAssignment[], depth: number, speculative: boolean): Finding {
    if (--this.#budget < 0 || depth > MAX_DEPTH) {
      return speculative ? ALLOWED : this.#doubt("the command is too complex to analyse");
    }
    const findings: Finding[] = assignments.flatMap((assignment) => this.#assignment(assignment));
    const nameWord = words[0];
    if (!nameWord) return this.#conclude(findings, speculative);

    const texts = words.map((word) => word.text);
    const program = programBaseName(nameWord.text);
    const candidates = [[program, ...texts.slice(1)].join(" "), texts.join(" ")];
    const denied = this.#matching(this.#rules.deny, candidates, true);
    if (denied) return { level: "deny", reason: `denied by ${denied.source}`, fromRule: true };
    const asked = this.#matching(this.#rules.ask, candidates, true);
    if (asked) findings.push({ level: "ask", reason: `${asked.source} asks`, fromRule: true });

    const construct = (upTo: number) => [program, ...texts.slice(1, upTo + 1)].join(" ");
    // A secret as the program name: its value, which no rule sees, would pick the program.
    if (nameWord.dynamic || nameWord.glob || new RegExp(SECRET_TEMPLATE.source).test(nameWord.text)) {
      findings.push(
        this.#doubt(`the program name ${nameWord.text} is only known at run time`, nameWord.text),
      );
    } else if (isUnknownPath(nameWord.text)) {
      findings.push(
        this.#doubt(`${nameWord.text} is a program the command may have written itself`, nameWord.text),
      );
    }
    words.forEach((word, index) => {
      if (index === 0) return;
      if (word.dynamic) {
        findings.push(this.#doubt(`the argument ${word.text} is only known at run time`, construct(index)));
      } else if (word.glob && !GLOB_SAFE_PROGRAMS.has(program.toLowerCase())) {
        findings.push(
          this.#doubt(
            `the file names ${word.text} expands to may be read as options of ${program}`,
            construct(index),
          ),
        );
      }
    });
    for (const reason of arithmeticDoubts(words)) {
      findings.push(this.#doubt(reason, construct(words.length - 1)));
    }
    const outerAllowed = this.#matching(this.#rules.allow, candidates, false) !== undefined;
    findings.push(this.#byKind(words, outerAllowed, depth, speculative));
    const concluded = this.#conclude(
      findings.map((finding) => this.#lifted(finding, candidates)),
      speculative,
    );
    return concluded;
  }

  #byKind(words: ShellWord[], outerAllowed: boolean, depth: number, speculative: boolean): Finding {
    const program = programBaseName((words[0] as ShellWord).text);
    const own: Finding = outerAllowed
      ? ALLOWED
      : { level: "unlisted", reason: `${program} is not in the allow rules`, fromRule: false };
    const liftedBy = (inner: Finding): Finding =>
      inner.level === "unlisted" && outerAllowed ? ALLOWED : inner;
    const kind = commandKind(words);
    switch (kind.kind) {
      case "plain":
        return own;
      case "wrapper": {
        const assignments = kind.assignments.map((word) => ({
          name: word.text.slice(0, word.text.indexOf("=")),
          subscripted: false,
          word,
        }));
        if (kind.inner.length === 0)
          return worst([own, ...assignments.flatMap((item) => this.#assignment(item))]);
        return liftedBy(this.#command(kind.inner, assignments, depth + 1, speculative));
      }
      case "shell": {
        const doubt = kind.script
          ? this.#doubt(`${program} -c runs a nested shell`, kind.construct)
          : this.#doubt(`${program} reads commands from a file or stdin`, kind.construct);
        const inner = kind.script
          ? this.#script(kind.script.text, depth + 1, true)
          : this.#speculate(words, depth);
        return worst([doubt, inner]);
      }
      case "runner": {
        const inner = (kind.inner ?? []).map((command) => this.#command(command, [], depth + 1, true));
        return worst([this.#doubt(kind.reason, kind.construct), ...inner, this.#speculate(words, depth)]);
      }
      case "interpreter":
        return worst([
          this.#doubt(`${program} runs code the check cannot read`, kind.construct),
          this.#speculate(words, depth),
        ]);
      case "text-code":
        if (kind.runs === undefined) return own;
        return worst([
          this.#doubt(kind.runs, kind.construct),
          this.#speculate(words, depth),
          ...kind.commands.map((command) => this.#script(command, depth + 1, true)),
        ]);
      case "state":
        return worst([
          this.#doubt(`${program} changes how later commands run, or runs code`, kind.construct),
          this.#speculate(words, depth),
        ]);
    }
  }

  #assignment(assignment: ShellAssignment): Finding[] {
    const findings: Finding[] = [];
    if (isSensitiveVariable(assignment.name)) {
      findings.push(
        this.#doubt(`it sets ${assignment.name}, which decides what programs run`, assignment.word.text),
      );
    }
    if (INTEGER_VARIABLES.has(assignment.name)) {
      findings.push(
        this.#doubt(
          `it sets ${assignment.name}, whose values bash evaluates as arithmetic, which can run code`,
          assignment.word.text,
        ),
      );
    }
    if (assignment.subscripted) {
      findings.push(
        this.#doubt(
          `it assigns ${assignment.name}[…], whose index is evaluated as code`,
          assignment.word.text,
        ),
      );
    }
    if (assignment.word.dynamic) {
      findings.push(
        this.#doubt(`the value of ${assignment.name} is only known at run time`, assignment.word.text),
      );
    }
    return findings;
  }

  /** Every later word as the start of a command and as a script, for deny and ask rules only. */
  #speculate(words: ShellWord[], depth: number): Finding {
    const findings: Finding[] = [];
    for (let index = 1; index < words.length; index++) {
      findings.push(this.#command(words.slice(index), [], depth + 1, true));
      const text = (words[index] as ShellWord).text;
      findings.push(this.#script(text, depth + 1, true));
      // `alias.x=!cmd`, `--checkpoint-action=exec=cmd`, `-oProxyCommand=cmd`: the value after an `=`.
      for (const value of new Set([/=([\s\S]*)$/.exec(text)?.[1], /=([^=]*)$/.exec(text)?.[1]])) {
        if (value) findings.push(this.#script(value.replace(/^!/, ""), depth + 1, true));
      }
      if (findings.some((finding) => finding.level === "deny")) break;
    }
    return worst(findings);
  }

  #matching(rules: PermissionRule[], candidates: string[], loose: boolean): PermissionRule | undefined {
    return rules.find((rule) => candidates.some((text) => ruleMatches(rule, text, loose)));
  }

  /**
   * A doubt is lifted by an allow rule that matches the command and spells out its construct
   * before any `*`: `shell(make test)` or `shell(git -c core.pager=cat *)`, never a bare `shell`.
   */
  #lifted(finding: Finding, candidates: string[]): Finding {
    if (finding.level !== "ask" || finding.fromRule || finding.construct === undefined) return finding;
    const construct = finding.construct;
    const naming = this.#rules.allow.some((rule) => {
      if (rule.pattern === undefined) return false;
      const literal = (rule.pattern.split("*")[0] ?? "").trim();
      return (
        literal.length > 0 &&
        literal.startsWith(construct) &&
        candidates.some((text) => ruleMatches(rule, text, false))
      );
    });
    return naming ? ALLOWED : finding;
  }

  #doubt(reason: string, construct?: string): Finding {
    return {
      level: "ask",
      reason: `asks because ${reason}`,
      fromRule: false,
      ...(construct === undefined ? {} : { construct }),
    };
  }

  /** The worst finding; a speculative look keeps only what deny and ask rules say. */
  #conclude(findings: Finding[], speculative: boolean): Finding {
    return worst(speculative ? findings.filter((finding) => finding.fromRule) : findings);
  }
}
