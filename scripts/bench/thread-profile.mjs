// A CPU profile of the calling thread through the inspector, for benches that take --cpu-prof-dir.
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import path from "node:path";

/**
 * Starts profiling this thread when `directory` is set (every 200 µs); returns what stops it and
 * writes `<directory>/<name>.cpuprofile` (and `<name>.windows.json`, the spans given to it). Without a directory, nothing is profiled.
 */
export async function startThreadProfile(directory, name) {
  if (!directory) return async () => {};
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  return async (windows) => {
    const { profile } = await session.post("Profiler.stop");
    session.disconnect();
    mkdirSync(directory, { recursive: true });
    const file = path.join(directory, `${name}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    // Spans of interest to the bench (in the profile's clock), for a tool that reads only them.
    if (windows) writeFileSync(path.join(directory, `${name}.windows.json`), JSON.stringify(windows));
    console.error(`CPU profile: ${file}`);
  };
}
