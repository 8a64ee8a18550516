import { copyFileSync, mkdirSync, symlinkSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { SandboxProject } from "./sandbox-project.js";

let project: SandboxProject | undefined;
afterEach(() => project?.dispose());

/**
 * A red-team attack: a sandboxed process takes the bridge's channel (pidfd_getfd on the bridge,
 * same uid) and floods empty DATA frames for a stream whose proxy connection is stalled. The
 * daemon used to queue one socket.write per frame (the window counts bytes; empty frames cost
 * none) and ran out of memory. Now an empty frame closes that channel, and frames that come
 * while a write is under way are copied into one buffer the window bounds.
 * The bridge runs where perl is missing (otherwise the sandbox hands its listener to the daemon and
 * no process holds a channel, see listener-handoff.test.ts): here the search path has no perl.
 */
it(
  "a flood of empty frames on a stalled stream is cut, and the daemon's memory does not grow",
  { timeout: 180_000 },
  async () => {
    project = new SandboxProject();
    const sockets: net.Socket[] = [];
    // An allowed upstream that accepts and never reads.
    const upstream = net.createServer((socket) => {
      sockets.push(socket);
      socket.pause();
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const port = (upstream.address() as net.AddressInfo).port;
    copyFileSync(
      path.join(import.meta.dirname, "..", "fixtures", "sandbox", "bridge-flood.py"),
      path.join(project.workdir, "flood.py"),
    );
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }, 50);
    try {
      const bin = path.join(project.root, "bin-without-perl");
      mkdirSync(bin);
      for (const program of ["bwrap", "bash"]) symlinkSync(`/usr/bin/${program}`, path.join(bin, program));
      const result = await project.shell(`/usr/bin/python3 flood.py ${port} 3000000`, {
        sandbox: { network: [`127.0.0.1:${port}`] },
        host: project.host({ ...process.env, HOME: project.home, PATH: bin }),
      });
      // The channel closes on the first empty frame: the flood never gets through.
      expect(result.output).not.toContain("frames 3003000");
      expect(result.output).toMatch(/BrokenPipeError|ConnectionResetError/);
      expect(peak - before).toBeLessThan(64 * 1048576);
    } finally {
      clearInterval(sampler);
      for (const socket of sockets) socket.destroy();
      upstream.close();
    }
  },
);
