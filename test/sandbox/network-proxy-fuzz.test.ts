import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProxyLimits } from "../../src/sandbox/proxy-limits.js";
import { waitFor } from "../support/wait-for.js";
import { type ClientCase, clientCases, FUZZ_HOST_LIST, upstreamCases } from "./proxy-fuzz-corpus.js";
import { type ProxyUnderTest, startProxyUnderTest } from "./proxy-under-test.js";
import { GOOD_BODY, type RawUpstream, startRawUpstream } from "./raw-upstream.js";

// The built proxy (dist/) runs in a child process: `npm run build` first. Its timeouts are short so
// that a case the proxy must time out ends within a second or two.
const LIMITS: Partial<ProxyLimits> = {
  maxConnections: 16,
  maxUpstreams: 8,
  headersTimeoutMilliseconds: 600,
  requestTimeoutMilliseconds: 1_200,
  keepAliveTimeoutMilliseconds: 300,
  connectTimeoutMilliseconds: 1_000,
  idleTimeoutMilliseconds: 1_000,
  timeoutCheckMilliseconds: 100,
};

const UPSTREAM_CASES = upstreamCases();
let upstream: RawUpstream;
let proxy: ProxyUnderTest;
let upstreamAuthority: string;

beforeAll(async () => {
  upstream = await startRawUpstream(UPSTREAM_CASES.map((testCase) => testCase.reply));
  upstreamAuthority = `127.0.0.1:${upstream.port}`;
  proxy = await startProxyUnderTest(FUZZ_HOST_LIST, LIMITS);
});
afterAll(async () => {
  await proxy.stop();
  await upstream.close();
});

const text = (value: string) => Buffer.from(value, "latin1");
const goodRequest = () =>
  text(
    `GET http://${upstreamAuthority}/good HTTP/1.1\r\nHost: ${upstreamAuthority}\r\nConnection: close\r\n\r\n`,
  );

/** The status of the first answer in `reply`, or undefined when the proxy sent nothing. */
function firstStatus(reply: string): number | undefined {
  const match = /^HTTP\/1\.1 (\d{3}) /.exec(reply);
  return match ? Number(match[1]) : undefined;
}

/**
 * Sends one case and checks what a client can: the proxy answered with a status line (or said
 * nothing), the expected status when the case names one, and closed the connection once the client
 * half-closed. Then the proxy's process must be alive and answer a good request. Returns the
 * problems found, empty when none.
 */
async function runCase(name: string, chunks: Buffer[], status: number | undefined): Promise<string[]> {
  const problems: string[] = [];
  const { reply, closed } = await proxy.exchange(chunks);
  const shown = JSON.stringify(reply.slice(0, 160));
  if (reply !== "" && firstStatus(reply) === undefined) problems.push(`${name}: no status line: ${shown}`);
  if (status !== undefined && firstStatus(reply) !== status) {
    problems.push(`${name}: expected ${status}, got ${shown}`);
  }
  if (!closed) problems.push(`${name}: the connection stayed open after the client's end`);
  const good = await proxy.exchange([goodRequest()]);
  // A crash may land a moment after the case's own answer: the good request comes after it.
  if (!proxy.alive()) throw new Error(`the proxy's process died after "${name}":\n${proxy.stderr()}`);
  if (!good.reply.includes(GOOD_BODY))
    problems.push(`${name}: a good request after it got ${JSON.stringify(good.reply)}`);
  return problems;
}

describe("the network proxy, fed malformed requests and answers", () => {
  it(
    "answers each malformed client request with a status or a close, and keeps serving",
    { timeout: 30_000 },
    async () => {
      const baseline = proxy.openSockets();
      const cases: ClientCase[] = clientCases(upstreamAuthority);
      expect(cases.length).toBeGreaterThanOrEqual(200);
      const problems: string[] = [];
      for (const testCase of cases)
        problems.push(...(await runCase(testCase.name, testCase.chunks, testCase.status)));
      expect(problems).toEqual([]);
      // Nothing is left open: every socket the cases made is closed again.
      await waitFor(() => proxy.openSockets() <= baseline, "the proxy to close every case's sockets", 5_000);
    },
  );

  it(
    "answers each malformed upstream answer with its status or a 502, and keeps serving",
    { timeout: 30_000 },
    async () => {
      const baseline = proxy.openSockets();
      expect(UPSTREAM_CASES.length).toBeGreaterThanOrEqual(100);
      const problems: string[] = [];
      for (const [index, testCase] of UPSTREAM_CASES.entries()) {
        const target = `http://${upstreamAuthority}/case/${index}`;
        const request = text(`GET ${target} HTTP/1.1\r\nHost: ${upstreamAuthority}\r\n\r\n`);
        problems.push(...(await runCase(`upstream ${testCase.name}`, [request], testCase.status)));
        if (testCase.reply.then !== "end") {
          // The same answer through a CONNECT tunnel, which the proxy does not read.
          const tunnelled = text(
            `CONNECT ${upstreamAuthority} HTTP/1.1\r\nHost: x\r\n\r\nGET /case/${index} HTTP/1.1\r\n\r\n`,
          );
          problems.push(...(await runCase(`tunnelled ${testCase.name}`, [tunnelled], 200)));
        }
        upstream.dropConnections();
      }
      expect(problems).toEqual([]);
      await waitFor(() => proxy.openSockets() <= baseline, "the proxy to close every case's sockets", 5_000);
    },
  );
});
