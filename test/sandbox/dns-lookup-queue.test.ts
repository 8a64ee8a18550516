import { describe, expect, it } from "vitest";
import { DnsLookupQueue } from "../../src/sandbox/dns-lookup-queue.js";

/** Resolves with each lookup's error code, or "ok", in the order they were asked. */
function lookUp(queue: DnsLookupQueue, names: string[]): Promise<string[]> {
  return Promise.all(
    names.map(
      (name) =>
        new Promise<string>((resolve) =>
          queue.lookup(name, {}, (error, addresses) =>
            resolve(error ? String(error.code) : addresses.length > 0 ? "ok" : "empty"),
          ),
        ),
    ),
  );
}

describe("DnsLookupQueue", () => {
  it("answers every lookup of several proxies, and refuses a proxy's lookups past 64 waiting", async () => {
    const [first, second] = [new DnsLookupQueue(), new DnsLookupQueue()];
    const [many, few] = await Promise.all([
      lookUp(
        first,
        Array.from({ length: 70 }, () => "localhost"),
      ),
      lookUp(second, ["localhost", "localhost", "127.0.0.1"]),
    ]);
    // Two start at once, 64 wait, the last four are refused; the other proxy's are all answered.
    expect(many.filter((answer) => answer === "ok")).toHaveLength(66);
    expect(many.slice(66)).toEqual(["EAI_AGAIN", "EAI_AGAIN", "EAI_AGAIN", "EAI_AGAIN"]);
    expect(few).toEqual(["ok", "ok", "ok"]);
  });

  it("refuses a name with a NUL byte, which getaddrinfo would cut short", async () => {
    const answers = await lookUp(new DnsLookupQueue(), ["localhost\u0000.allowed.example", "localhost"]);
    expect(answers).toEqual(["ENOTFOUND", "ok"]);
  });
});
