import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { finished } from "node:stream/promises";
import path from "node:path";

/** Where `agentd run` writes its log lines, so they stay out of the progress view. */
export interface RunLog {
  file: string;
  stream: NodeJS.WritableStream;
  /** Flushes and closes the file. */
  close(): Promise<void>;
}

/** Opens `<data_dir>/logs/agentd-run.log` for appending (runs of several processes share it). */
export async function openRunLog(dataDirectory: string): Promise<RunLog> {
  const directory = path.join(dataDirectory, "logs");
  await mkdir(directory, { recursive: true });
  const file = path.join(directory, "agentd-run.log");
  const stream = createWriteStream(file, { flags: "a" });
  return {
    file,
    stream,
    close: async () => {
      stream.end();
      await finished(stream);
    },
  };
}
