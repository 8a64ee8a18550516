// A CPU profile of the calling thread through the inspector, for benches that take --cpu-prof-dir.
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import path from "node:path";

/**
 * Starts profiling this thread when `directory` is set (every 200 µs); returns what stops it and
 * writes `<directory>/<name>.cpuprofile`. Without a directory, nothing is profiled.
 */
export async function startThreadProfile(directory, name) {
  if (!directory) return async () => {};
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    session.disconnect();
    mkdirSync(directory, { recursive: true });
    const file = path.join(directory, `${name}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    console.error(`CPU profile: ${file}`);
  };
}
