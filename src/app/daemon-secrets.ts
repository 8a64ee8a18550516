import { statSync } from "node:fs";
import path from "node:path";
import type { Config } from "../config/config-schema.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { DefinitionSnapshot } from "../definitions/definition-snapshot.js";
import { settleOrAbandon } from "../util/settle-or-abandon.js";
import type { Worker } from "../workers/worker.js";
import type { ModelProvider } from "../llm/model-client.js";
import type { Logger } from "../logging/logger.js";
import { learnVaultSecrets } from "../vault/learn-vault-secrets.js";
import { protectConfigSecrets } from "../secrets/protect-config-secrets.js";
import { protectVaultMaterial } from "../secrets/protect-vault-material.js";
import { MaskedPrompts } from "../secrets/masked-prompts.js";
import { SecretRedactor } from "../secrets/secret-redactor.js";
import { createVault } from "../vault/create-vault.js";
import { resolveConfigSecrets } from "../vault/resolve-config-secrets.js";
import type { Vault } from "../vault/vault.js";
import type { RunCheckpoints } from "../checkpoints/checkpoint.js";
import { visitStrings } from "../secrets/secret-template.js";

/** The vault, the config with `{{secret:name}}` resolved, and the redactor that knows the values. */
export interface DaemonSecrets {
  vault: Vault;
  config: Config;
  redactor: SecretRedactor;
}

/**
 * Opens the vault config `vault` names (unless one is given) and resolves the config's secret
 * templates, teaching the redactor each value. Throws SECRET_NOT_FOUND naming the config key.
 */
export async function prepareSecrets(
  config: Config,
  vault: Vault = createVault(config),
): Promise<DaemonSecrets> {
  const redactor = new SecretRedactor();
  const resolved = await resolveConfigSecrets(config, vault, redactor);
  protectConfigSecrets(resolved, redactor);
  protectVaultMaterial(resolved, redactor);
  return { vault, redactor, config: resolved };
}

/** What the daemon calls to keep the redactor's knowledge of the vault current. */
export interface SecretLearner {
  /** After a (re)load of the definitions: notes whether any agent declares `secrets`. */
  definitionsChanged(snapshot: DefinitionSnapshot): void;
  /** Before each run: reads the vault again if it may hold values the redactor has not seen. */
  refresh(): Promise<void>;
  /** Whether a refresh now would have nothing to do: the vault is as last read, no read under way. */
  current(): boolean;
}

/**
 * Teaches the redactor every vault value, so output that reveals one is masked even before a tool
 * uses it by name: an agent's shell reading the vault, a secret set while the daemon runs. With
 * the file backend the vault is read whenever its file changed (never created: no key file is made
 * for a daemon without secrets); with `env`, every time (reading the environment is free); the
 * keychain only once some agent declares `secrets`, since asking it may prompt. A vault that cannot
 * be read is a warning here; the tool call that needs a secret reports the error.
 */
export function createSecretLearner(secrets: DaemonSecrets, logger: Logger): SecretLearner {
  const vaultFile = secrets.config.vault.file ?? path.join(secrets.config.data_dir, "vault.json");
  let usesSecrets = false;
  let learnedVersion: string | undefined;
  let learning: Promise<void> | undefined;
  const currentVersion = (): string | undefined => {
    switch (secrets.vault.backend) {
      case "env":
        return undefined;
      case "file": {
        const stats = statSync(vaultFile, { throwIfNoEntry: false });
        return stats ? `${stats.mtimeMs}:${stats.size}` : "absent";
      }
      default:
        return usesSecrets ? "declared" : "absent";
    }
  };
  const known = (version: string | undefined) =>
    version === "absent" || (version !== undefined && version === learnedVersion);
  const learn = async (): Promise<void> => {
    const version = currentVersion();
    if (known(version)) return;
    // The file's new ciphertext (and a key file made meanwhile) are masked too.
    protectVaultMaterial(secrets.config, secrets.redactor);
    try {
      const count = await learnVaultSecrets(secrets.vault, secrets.redactor);
      learnedVersion = version;
      logger.debug({ count, backend: secrets.vault.backend }, "vault secrets loaded for redaction");
    } catch (error) {
      learnedVersion = version;
      logger.warn({ err: error }, "could not read the vault; secrets are masked once used");
    }
  };
  // A read under way may have looked at the vault before the caller's change (a secret set since):
  // a caller that comes meanwhile waits for one more read after it, shared by all who came.
  let again: Promise<void> | undefined;
  const refresh = (): Promise<void> => {
    if (learning === undefined) {
      learning = learn().finally(() => (learning = undefined));
      return learning;
    }
    again ??= learning.then(() => {
      again = undefined;
      return refresh();
    });
    return again;
  };
  return {
    definitionsChanged: (snapshot) => {
      usesSecrets = snapshot.agents.some(
        (status) => (status.definition?.frontmatter.secrets.length ?? 0) > 0,
      );
      void refresh();
    },
    refresh,
    current: () => learning === undefined && known(currentVersion()),
  };
}

/**
 * Wraps each worker so a run starts only once the redactor knows the vault's current values, and
 * with what the model reads masked by them: the task (masked when the run was queued, before a
 * value set since, or not yet read at start, was known), the agent file's prompt (an operator's
 * text, never masked before) and a resumed run's checkpoint (masked when it was saved, before a
 * value added to the vault since). The worker hands them to the model as it gets them.
 */
export function learningSecretsFirst(
  workerFor: (definition: AgentDefinition) => Worker,
  learner: SecretLearner,
  redactor: Pick<SecretRedactor, "redactText" | "learned">,
): (definition: AgentDefinition) => Worker {
  const redact = redactor.redactText;
  // The same for every run of a definition version: masked once while nothing new is learned.
  const prompts = new MaskedPrompts(redactor);
  return (definition) => {
    const worker = workerFor(definition);
    return {
      run: async (context) => {
        // A keychain that never answers must not make the run unstoppable.
        await settleOrAbandon(learner.refresh(), context.control.signal, 0);
        const task = redact(context.task);
        const checkpoints = resumedMasked(context.checkpoints, redact);
        const systemPrompt = prompts.of(definition);
        if (systemPrompt === definition.systemPrompt) return worker.run({ ...context, task, ...checkpoints });
        // Rarely: the wrapped workers (the memory's) read the definition they were made for.
        const masked = { ...definition, systemPrompt };
        return workerFor(masked).run({
          ...context,
          task,
          ...checkpoints,
          definition: { ...context.definition, systemPrompt: prompts.of(context.definition) },
        });
      },
    };
  };
}

/**
 * A resumed run's checkpoints with the state it resumes from masked by what the redactor knows now
 * (nothing to add for a run that is not resumed, or whose checkpoint holds no value known since).
 */
function resumedMasked(
  checkpoints: RunCheckpoints | undefined,
  redact: (text: string) => string,
): { checkpoints: RunCheckpoints } | Record<string, never> {
  const from = checkpoints?.resumeFrom;
  if (checkpoints === undefined || from === undefined) return {};
  const resumeFrom = visitStrings(from, redact);
  // Unchanged (nearly always): the same object comes back, and the checkpoints are kept as they are.
  if (resumeFrom === from) return {};
  return { checkpoints: { resumeFrom, save: (checkpoint) => checkpoints.save(checkpoint) } };
}

/**
 * The model, asked only once the redactor knows the vault's current values: a secret set while a
 * run is under way is masked from that run's next model turn on (its answer, its events, its
 * result), not only from the next run. For the file vault only: one `stat` of its file a turn, a
 * read only when it changed. The environment cannot change under a running daemon, and a keychain
 * may prompt (it is read when a run starts).
 */
export function learningSecretsEachTurn(model: ModelProvider, learner: SecretLearner): ModelProvider {
  return {
    complete(request, options) {
      // Nearly every turn the file is as last read (one stat): the model is asked at once.
      if (learner.current()) return model.complete(request, options);
      // A read only when the file changed: it cannot hang.
      return learner.refresh().then(() => model.complete(request, options));
    },
  };
}
