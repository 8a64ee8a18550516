import net from "node:net";

/** An IPv4 range: first address as a 32-bit number, prefix length, and what it is called. */
type V4Range = [base: number, prefix: number, name: string];

/**
 * The documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32) are not
 * here: they route nowhere on the internet and hold no internal service, and closed networks put
 * their package mirrors in them (a CI machine of ours resolves registry.npmjs.org into 203.0.113.0/24),
 * so refusing them would only break such networks.
 */
const V4_RANGES: readonly V4Range[] = [
  [v4("0.0.0.0"), 32, "unspecified (0.0.0.0, which reaches this machine)"],
  [v4("0.0.0.0"), 8, "this-network (0.0.0.0/8)"],
  [v4("10.0.0.0"), 8, "private (RFC 1918, 10.0.0.0/8)"],
  [v4("100.64.0.0"), 10, "carrier-grade NAT (100.64.0.0/10)"],
  [v4("127.0.0.0"), 8, "loopback (127.0.0.0/8)"],
  [v4("169.254.0.0"), 16, "link-local (169.254.0.0/16, cloud metadata)"],
  [v4("172.16.0.0"), 12, "private (RFC 1918, 172.16.0.0/12)"],
  [v4("192.0.0.0"), 24, "reserved (192.0.0.0/24)"],
  [v4("192.88.99.0"), 24, "reserved (6to4 relay, 192.88.99.0/24)"],
  [v4("192.168.0.0"), 16, "private (RFC 1918, 192.168.0.0/16)"],
  [v4("198.18.0.0"), 15, "benchmarking (198.18.0.0/15)"],
  [v4("224.0.0.0"), 4, "multicast (224.0.0.0/4)"],
  [v4("240.0.0.0"), 4, "reserved or broadcast (240.0.0.0/4)"],
];

/** IPv6 ranges, as a prefix of the 128-bit address written as a bigint. */
const V6_RANGES: ReadonlyArray<[base: bigint, prefix: number, name: string]> = [
  [v6("::"), 128, "unspecified (::, which reaches this machine)"],
  [v6("::1"), 128, "loopback (::1)"],
  [v6("::"), 96, "IPv4-compatible (::/96)"],
  [v6("100::"), 64, "discard (100::/64)"],
  [v6("64:ff9b:1::"), 48, "local NAT64 (64:ff9b:1::/48)"],
  [v6("fc00::"), 7, "unique local (fc00::/7)"],
  [v6("fe80::"), 10, "link-local (fe80::/10)"],
  [v6("fec0::"), 10, "site-local (fec0::/10)"],
  [v6("ff00::"), 8, "multicast (ff00::/8)"],
];

/**
 * What kind of internal address `address` is — loopback, private, link-local, carrier-grade NAT,
 * unique local, multicast, reserved… — or undefined for a public (globally routed) address and for
 * anything that is not an IP address. An IPv4 address embedded in IPv6 (`::ffff:10.0.0.1`, NAT64
 * `64:ff9b::a00:1`) is judged by its IPv4 address.
 */
export function internalAddressClass(address: string): string | undefined {
  const bare = address.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  if (net.isIPv4(bare)) return v4Class(v4(bare));
  if (!net.isIPv6(bare)) return undefined;
  const value = v6(bare);
  const embedded = value & 0xffff_ffffn;
  if (value >> 32n === 0xffffn) return v4Class(Number(embedded));
  if (value >> 32n === v6("64:ff9b::") >> 32n) return v4Class(Number(embedded));
  for (const [base, prefix, name] of V6_RANGES) {
    if (value >> BigInt(128 - prefix) === base >> BigInt(128 - prefix)) return name;
  }
  return undefined;
}

/** True for a class that reaches this machine: loopback, and the unspecified address. */
export function reachesThisMachine(kind: string | undefined): boolean {
  return kind !== undefined && /^(?:loopback|unspecified)/.test(kind);
}

function v4Class(value: number): string | undefined {
  for (const [base, prefix, name] of V4_RANGES) {
    const shift = 32 - prefix;
    if (value >>> shift === base >>> shift) return name;
  }
  return undefined;
}

function v4(address: string): number {
  return address.split(".").reduce((sum, part) => sum * 256 + Number(part), 0);
}

/** A valid IPv6 address (an IPv4 tail allowed) as a 128-bit number. */
function v6(address: string): bigint {
  let text = address;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (tail !== undefined) {
    const value = v4(tail);
    text = `${text.slice(0, -tail.length)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head = "", rest] = text.split("::");
  const front = head === "" ? [] : head.split(":");
  const back = rest === undefined || rest === "" ? [] : rest.split(":");
  const groups =
    rest === undefined
      ? front
      : [...front, ...Array<string>(8 - front.length - back.length).fill("0"), ...back];
  return groups.reduce((sum, group) => (sum << 16n) + BigInt(Number.parseInt(group, 16)), 0n);
}
