import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * A CLI run's private folder: its TMPDIR (mode 0700, so what a CLI writes to its temp folder —
 * Gemini's error reports hold the whole conversation — is not readable by other users) and the
 * home of the files agentd writes for it (system prompt, settings, policy). Removed after the run.
 * It lives under `<data_dir>/cli-runs`, not the shared `/tmp`: Gemini CLI refuses a settings file
 * below a folder others can write to.
 */
export class CliRunDirectory {
  readonly path: string;

  private constructor(directory: string) {
    this.path = directory;
  }

  static async create(parent: string, runId: string): Promise<CliRunDirectory> {
    await mkdir(parent, { recursive: true, mode: 0o700 });
    // mkdtemp makes the folder 0700.
    return new CliRunDirectory(await mkdtemp(path.join(parent, `${runId}-`)));
  }

  /** Writes the adapter's files (absolute paths inside this folder), readable by the owner only. */
  async write(files: Record<string, string>): Promise<void> {
    for (const [file, content] of Object.entries(files)) {
      if (path.relative(this.path, file).startsWith("..")) {
        throw new Error(`a CLI adapter file must be inside the run's folder: ${file}`);
      }
      await writeFile(file, content, { mode: 0o600 });
    }
  }

  /** The variables that point a child's temp files here. */
  environment(): Record<string, string> {
    return { TMPDIR: this.path, TMP: this.path, TEMP: this.path };
  }

  async remove(): Promise<void> {
    await rm(this.path, { recursive: true, force: true });
  }
}
