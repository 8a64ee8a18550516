import { lstatSync, realpathSync } from "node:fs";
import path from "node:path";
import type { ArmedTrigger } from "./trigger-set.js";
import type { WatchTriggerSettings } from "./trigger-schema.js";

/** The trigger's folder as written, from the agent's workdir. */
export function spelledFolder(trigger: ArmedTrigger<WatchTriggerSettings>): string {
  return path.resolve(trigger.definition.workdir, trigger.settings.watch.path);
}

/** The trigger's folder, its links resolved, when it exists and is a folder. */
export function existingFolder(trigger: ArmedTrigger<WatchTriggerSettings>): string | undefined {
  try {
    const folder = realpathSync(spelledFolder(trigger));
    return lstatSync(folder).isDirectory() ? folder : undefined;
  } catch {
    return undefined;
  }
}

/** What makes a watcher the same one: its folder, glob, debounce and agent definition. */
export function signatureOf(trigger: ArmedTrigger<WatchTriggerSettings>, folder: string): string {
  const { glob, debounce } = trigger.settings.watch;
  return JSON.stringify([folder, glob, debounce, trigger.definition.hash]);
}

/** Whether `file` is a folder (not a link to one). */
export function isFolder(file: string): boolean {
  try {
    return lstatSync(file).isDirectory();
  } catch {
    return false;
  }
}
