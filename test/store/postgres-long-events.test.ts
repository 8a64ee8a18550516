import { beforeAll, describe, expect, it } from "vitest";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();

/**
 * Past the 64 Ki characters the ring keeps in memory (a stand-in there, the line in the store): text
 * that JSON escapes (quotes, backslashes, new lines, U+2028), characters of two and four bytes.
 */
const CONTENT = Array.from(
  { length: 9_000 },
  (_, index) => `${index}:"é\\😀\n\u2028ü` + (index % 7 === 0 ? "\t" : ""),
).join("|");

/** An open SSE stream of the agent, resumed after `lastEventId`: its raw `data:` lines, read until `done`. */
async function openStream(
  node: DaemonProcess,
  agent: string,
  lastEventId: number,
): Promise<{ readUntil(done: (line: string) => boolean): Promise<string[]> }> {
  const response = await fetch(`${node.url}/agents/${agent}/events/stream`, {
    headers: { ...node.headers(), "last-event-id": String(lastEventId) },
    signal: AbortSignal.timeout(60_000),
  });
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>)
    .pipeThrough(new TextDecoderStream())
    .getReader();
  return {
    async readUntil(done) {
      const lines: string[] = [];
      let buffer = "";
      while (lines.length === 0 || !done(lines.at(-1) as string)) {
        const chunk = await reader.read();
        if (chunk.done) break;
        buffer += chunk.value;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split("\n").find((line) => line.startsWith("data: "));
          if (data !== undefined) lines.push(data.slice(6));
        }
      }
      await reader.cancel();
      return lines;
    },
  };
}

/** The raw `data:` lines of the agent's SSE stream from `lastEventId` until event `last`. */
async function streamedLines(
  node: DaemonProcess,
  agent: string,
  lastEventId: number,
  last: number,
): Promise<string[]> {
  const stream = await openStream(node, agent, lastEventId);
  return stream.readUntil((line) => (JSON.parse(line) as { id: number }).id >= last);
}

/** A response body as the client received it: raw text, not parsed. */
async function rawBody(node: DaemonProcess, urlPath: string): Promise<string> {
  const response = await fetch(`${node.url}${urlPath}`, { headers: node.headers() });
  expect(response.status).toBe(200);
  return response.text();
}

/**
 * An event longer than the ring keeps (`write_file` with 100 Ki characters: its `action` event)
 * on a cluster: the node that ran it and another node serve it whole and byte for byte the same,
 * by poll, by SSE and in the merged feed.
 */
describe.skipIf(missing !== undefined)(
  "an event longer than 64 Ki characters on a cluster",
  { timeout: 180_000 },
  () => {
    const kit = useTestKit("file");
    let cluster: PostgresCluster;

    beforeAll(async () => {
      cluster = await startPostgresCluster(kit, {
        nodes: 2,
        reply: (request) => {
          const answered = (request.body?.messages ?? []).some((message) => message.role === "tool");
          return answered
            ? textReply("written")
            : toolCallReply({ name: "write_file", arguments: { path: "long.txt", content: CONTENT } });
        },
        agents: (project, index) => {
          project.writeAgent("writer", {
            // Node B serves the agent's events but never runs it.
            enabled: index === 0,
            tools: ["write_file"],
            permissions: { allow: ["write_file"] },
          });
        },
      });
    }, 120_000);

    it("is served whole and the same by poll, SSE and the merged feed, on both nodes", async () => {
      expect(CONTENT.length).toBeGreaterThan(100 * 1024);
      const [nodeA, nodeB] = cluster.nodes as [DaemonProcess, DaemonProcess];
      // Streams open before the run: the long event reaches them live, not from a replay.
      const ended = (line: string) => {
        const event = JSON.parse(line) as { type: string; data: { status?: string } };
        return event.type === "status" && event.data.status === "completed";
      };
      const liveA = (await openStream(nodeA, "writer", 0)).readUntil(ended);
      const liveB = (await openStream(nodeB, "writer", 0)).readUntil(ended);
      const run = await startRun(nodeA, "writer", "write the long file");
      expect((await waitForRunEnd(nodeA, run, 60_000)).status).toBe("completed");

      const pollA = await rawBody(nodeA, "/agents/writer/events?after=0&limit=1000");
      const lastId = (JSON.parse(pollA) as { next: number }).next;
      const fromA = await streamedLines(nodeA, "writer", 0, lastId);
      const action = fromA.find((line) => (JSON.parse(line) as { type: string }).type === "action");
      expect(action, "the action event on node A's stream").toBeDefined();
      const long = action as string;
      expect(long.length).toBeGreaterThan(64 * 1024);
      expect((JSON.parse(long) as { data: { arguments: { content: string } } }).data.arguments.content).toBe(
        CONTENT,
      );
      expect(await liveA).toEqual(fromA);
      expect(await liveB).toEqual(fromA);

      // Node A: poll and merged feed carry the very line its stream sent.
      expect(pollA).toContain(long);
      expect(await rawBody(nodeA, "/events?limit=1000")).toContain(long);
      // Node B, which never ran it: stream, poll and merged feed.
      await waitFor(async () => {
        const reply = await nodeB.request("GET", `/runs/${run}`);
        return (reply.body as { status?: string }).status === "completed";
      }, "node B to see the run end");
      expect(await streamedLines(nodeB, "writer", 0, lastId)).toEqual(fromA);
      expect(await rawBody(nodeB, "/agents/writer/events?after=0&limit=1000")).toContain(long);
      expect(await rawBody(nodeB, "/events?limit=1000")).toContain(long);
      // The run's own events (read from the store, not the ring) too.
      expect(await rawBody(nodeB, `/runs/${run}/events?after=0&limit=1000`)).toContain(long);

      // Node A killed -9 and started again: its ring is rebuilt from the store, the line as a stand-in.
      await nodeA.kill();
      const restarted = await cluster.restart(0);
      expect(await rawBody(restarted, "/agents/writer/events?after=0&limit=1000")).toContain(long);
      expect(await rawBody(restarted, "/events?limit=1000")).toContain(long);
      expect(await streamedLines(restarted, "writer", 0, lastId)).toEqual(fromA);
    });
  },
);
