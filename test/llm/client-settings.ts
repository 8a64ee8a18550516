import { ModelClient, type ModelClientSettings } from "../../src/llm/model-client.js";

/** A ModelClient against a scripted server with short timeouts and back-off, for fast tests. */
export function testClient(url: string, overrides: Partial<ModelClientSettings> = {}): ModelClient {
  return new ModelClient({
    baseUrl: url,
    apiKey: "test-key",
    timeouts: { firstChunkMilliseconds: 5_000, idleMilliseconds: 5_000, callMilliseconds: 15_000 },
    maxAttempts: 3,
    backoff: { baseDelayMilliseconds: 10, maxDelayMilliseconds: 2_000 },
    circuitBreaker: { failureThreshold: 100, cooldownMilliseconds: 60_000 },
    prices: {},
    // The daemon's connections (model-fetch.ts): what most model calls go through.
    ownConnections: true,
    ...overrides,
  });
}
