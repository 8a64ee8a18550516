import type { UpstreamReply } from "./raw-upstream.js";

/** Bytes a client sends to the proxy, and the status the proxy must answer first (when known). */
export interface ClientCase {
  name: string;
  chunks: Buffer[];
  status?: number;
}

/** Bytes an upstream answers a forwarded request with, and the status the client must get. */
export interface UpstreamCase {
  name: string;
  reply: UpstreamReply;
  status?: number;
}

/** A deterministic generator (mulberry32): the same seed, the same corpus, on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The host list the proxy under test runs with: port-less hosts (any port), a wildcard, IPv6, a name that does not resolve. */
export const FUZZ_HOST_LIST = ["127.0.0.1", "localhost", "[::1]", "allowed.invalid", "*.wild.invalid"];

const bytes = (text: string): Buffer => Buffer.from(text, "latin1");
const one = (name: string, text: string, status?: number): ClientCase => ({
  name,
  chunks: [bytes(text)],
  ...(status === undefined ? {} : { status }),
});

/**
 * Malformed and odd client requests, by class, written by hand and then generated from seeded
 * mutations of good ones. `upstream` is `127.0.0.1:<port>` of the raw upstream.
 */
export function clientCases(upstream: string, seed = 20_240_611): ClientCase[] {
  const port = upstream.split(":")[1] ?? "";
  const get = (url: string, headers = `Host: ${upstream}\r\n`) => `GET ${url} HTTP/1.1\r\n${headers}\r\n`;
  const connect = (authority: string, extra = "") =>
    `CONNECT ${authority} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;
  const good = `http://${upstream}/good`;
  const cases: ClientCase[] = [];

  // CONNECT: ports out of range or not numbers, odd hosts, refused and unreachable hosts, bodies.
  for (const badPort of [
    "99999",
    "0",
    "65536",
    "4294967297",
    "000000",
    "-1",
    "",
    "abc",
    "+80",
    "0x50",
    "1e3",
    "80/",
  ]) {
    cases.push(one(`CONNECT port ${JSON.stringify(badPort)}`, connect(`127.0.0.1:${badPort}`), 400));
  }
  for (const host of [
    "",
    "[]",
    "[::1",
    "::1",
    "[zz::]",
    "a@b",
    "a/b",
    "%41",
    "a".repeat(300),
    "a..b",
    "[::1]:80",
    "127.0.0.1:80",
  ]) {
    cases.push(one(`CONNECT host ${JSON.stringify(host.slice(0, 20))}`, connect(`${host}:443`), 400));
  }
  cases.push(one("CONNECT without a port", connect("127.0.0.1"), 400));
  cases.push(one("CONNECT [::1]:99999", connect("[::1]:99999"), 400));
  cases.push(one("CONNECT an absolute URI", connect("http://127.0.0.1:80/"), 400));
  cases.push(one("CONNECT to a host not listed", connect("not.listed.example:443"), 403));
  cases.push(one("CONNECT to another loopback address", connect("127.0.0.2:80"), 403));
  cases.push(one("CONNECT to a wildcard's own domain", connect("wild.invalid:443"), 403));
  cases.push(one("CONNECT to a name that does not resolve", connect("allowed.invalid:443"), 502));
  cases.push(one("CONNECT to a wildcard name that does not resolve", connect("a.wild.invalid:443"), 502));
  cases.push(one("CONNECT to a closed port", connect("LOCALHOST:1"), 502));
  cases.push(one("CONNECT to a closed IPv6 port", connect("[::1]:1"), 502));
  cases.push(one("CONNECT with a trailing dot", connect("127.0.0.1.:1"), 502));
  cases.push(one("CONNECT with a body", connect(upstream, "Content-Length: 5\r\n") + "hello", 400));
  cases.push(
    one(
      "CONNECT chunked",
      connect(upstream, "Transfer-Encoding: chunked\r\n") + "5\r\nhello\r\n0\r\n\r\n",
      400,
    ),
  );
  cases.push(
    one("CONNECT with content-length 0", connect(upstream, "Content-Length: 0\r\n") + get("/good", ""), 200),
  );
  cases.push(one("CONNECT with the tunnel's first bytes", connect(upstream) + get("/good", ""), 200));
  cases.push(one("CONNECT then garbage", connect(upstream) + "\x00\xff\r\n\r\n".repeat(50), 200));
  cases.push(one("CONNECT twice", connect(upstream) + connect(upstream), 200));
  cases.push(one("CONNECT over HTTP/1.0", `CONNECT ${upstream} HTTP/1.0\r\n\r\n${get("/good", "")}`, 200));
  cases.push(one("CONNECT with a huge header", connect(upstream, `X: ${"a".repeat(20_000)}\r\n`), 431));
  cases.push({
    name: "CONNECT sent a byte at a time",
    chunks: [...bytes(connect("127.0.0.1:99999"))].map((byte) => Buffer.from([byte])),
    status: 400,
  });

  // Absolute URIs: ports, schemes, odd hosts, refused and unreachable hosts.
  const uriCases: Array<[string, number | undefined]> = [
    ["http://127.0.0.1:99999/", 400],
    ["http://127.0.0.1:0/", 400],
    ["http://127.0.0.1:65536/", 400],
    ["http://[::1]:0/", 400],
    ["http://[::1]:99999/", 400],
    ["http://[zz]/", 400],
    ["https://127.0.0.1/", 400],
    ["ftp://127.0.0.1/", 400],
    ["/relative/path", 400],
    ["*", 400],
    ["http:/127.0.0.1/", 400],
    ["http://", 400],
    ["http://@/", 400],
    ["http://a..b/", 400],
    ["http://a!b/", 400],
    [`http://${"a".repeat(260)}/`, 400],
    ["http://not.listed.example/", 403],
    ["http://-/", 403],
    ["http://127.0.0.2/", 403],
    ["http://wild.invalid/", 403],
    ["http://allowed.invalid/", 502],
    ["http://x.wild.invalid:8080/", 502],
    ["http://localhost:1/", 502],
    ["http://[::1]:1/", 502],
    ["http://127.0.0.1:1/", 502],
    [`http://user:pass@${upstream}/good`, 200],
    [`HTTP://${upstream}/good`, 200],
    [`http://127.1:${port}/good`, 200],
    [`http://0x7f.1:${port}/good`, 200],
    [`http://2130706433:${port}/good`, 200],
    [`http://${upstream}/%00%0d%0a`, 200],
    [`http://${upstream}/a?b=\x80\xff`, undefined],
    [`http://${upstream}/a b`, 400],
    [`http://${upstream}/a\x7fb`, undefined],
    [`http://${upstream}/a\tb`, undefined],
    [`http://ex\xe4mple.invalid/`, undefined],
    [`http://${upstream}/${"p".repeat(20_000)}`, 431],
  ];
  for (const [url, status] of uriCases)
    cases.push(one(`GET ${JSON.stringify(url.slice(0, 40))}`, get(url), status));

  // Methods.
  const methodCases: Array<[string, number | undefined]> = [
    ["get", 400],
    ["G@T", 400],
    ["FOOBAR", 400],
    ["A".repeat(100), 400],
    ["GET\x00", 400],
    ["HEAD", 200],
    ["DELETE", 200],
    ["OPTIONS", 200],
    ["TRACE", 200],
    ["PUT", 200],
    ["PATCH", 200],
    ["PROPFIND", 200],
    ["MKCOL", undefined],
    ["QUERY", undefined],
    ["SOURCE", undefined],
  ];
  for (const [method, status] of methodCases) {
    cases.push(
      one(
        `method ${JSON.stringify(method.slice(0, 12))}`,
        `${method} ${good} HTTP/1.1\r\nHost: x\r\n\r\n`,
        status,
      ),
    );
  }
  cases.push(one("HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400));
  cases.push(one("CONNECT method on an absolute URI", `CONNECT ${good} HTTP/1.1\r\nHost: x\r\n\r\n`, 400));

  // Versions, HTTP/0.9.
  cases.push(one("HTTP/0.9", `GET ${good}\r\n\r\n`, 505));
  for (const version of [
    "HTTP/2.0",
    "HTTP/1.2",
    "HTTP/9.9",
    "HTTP/1",
    "HTTP/1.1.1",
    "http/1.1",
    "HTTP/1.10",
    "HTTX/1.1",
  ]) {
    cases.push(one(`version ${version}`, `GET ${good} ${version}\r\nHost: x\r\n\r\n`));
  }
  cases.push(one("HTTP/1.0 without Host", `GET ${good} HTTP/1.0\r\n\r\n`, 200));
  cases.push(one("HTTP/1.1 without Host", `GET ${good} HTTP/1.1\r\n\r\n`, 400));

  // Header names and values node refuses, and framing tricks.
  const headerCases: Array<[string, string, number | undefined]> = [
    ["name with parentheses", "(bad): v\r\n", 400],
    ["name with a space", "Bad Name: v\r\n", 400],
    ["space before the colon", "Name : v\r\n", 400],
    ["empty name", ": v\r\n", 400],
    ["line without a colon", "just-a-line\r\n", 400],
    ["value with \\x01", "X: a\x01b\r\n", 400],
    ["value with DEL", "X: a\x7fb\r\n", 400],
    ["value with NUL", "X: a\x00b\r\n", 400],
    ["value with a bare CR", "X: a\rb\r\n", 400],
    ["value with latin-1 bytes", "X: \xe4\xff\r\n", undefined],
    ["folded value", "X: a\r\n b\r\n", 400],
    ["two content-lengths", "Content-Length: 1\r\nContent-Length: 2\r\n", 400],
    ["content-length and transfer-encoding", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", 400],
    ["negative content-length", "Content-Length: -1\r\n", 400],
    ["content-length too large", "Content-Length: 99999999999999999999999\r\n", 400],
    ["content-length list", "Content-Length: 1,1\r\n", undefined],
    ["transfer-encoding gzip", "Transfer-Encoding: gzip\r\n", 400],
    ["transfer-encoding chunked, gzip", "Transfer-Encoding: chunked, gzip\r\n", 400],
    ["transfer-encoding twice", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", undefined],
    ["transfer-encoding with junk", "Transfer-Encoding: xchunked\r\n", 400],
    ["expect 100-continue", "Expect: 100-continue\r\nContent-Length: 0\r\n", 100],
    ["expect something else", "Expect: teapot\r\n", 417],
    ["upgrade to websocket", "Connection: Upgrade\r\nUpgrade: websocket\r\n", 200],
    [
      "connection naming host and content-length",
      "Connection: host, content-length, x\r\nContent-Length: 0\r\n",
      200,
    ],
    ["proxy credentials", "Proxy-Authorization: Basic eDp5\r\nProxy-Connection: keep-alive\r\n", 200],
    ["two host headers", "Host: a\r\n", undefined],
    ["200 headers", "X-Many: v\r\n".repeat(200), 200],
    ["2000 small headers", "X: v\r\n".repeat(2_000), undefined],
    ["1000 long headers", "X-Long-Header-Name: value\r\n".repeat(1_000), 431],
    ["one 20 KiB header", `X-Big: ${"b".repeat(20_000)}\r\n`, 431],
    ["TE header", "TE: trailers\r\nTrailer: X\r\n", 200],
  ];
  for (const [name, headers, status] of headerCases) {
    cases.push(one(`header: ${name}`, `GET ${good} HTTP/1.1\r\nHost: ${upstream}\r\n${headers}\r\n`, status));
  }
  const post = (headers: string, body: string) =>
    `POST ${good} HTTP/1.1\r\nHost: ${upstream}\r\n${headers}\r\n${body}`;
  cases.push(one("chunked body", post("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), 200));
  cases.push(one("chunk size not hex", post("Transfer-Encoding: chunked\r\n", "zz\r\nhello\r\n0\r\n\r\n")));
  cases.push(
    one("chunk size overflowing", post("Transfer-Encoding: chunked\r\n", "ffffffffffffffffffff\r\nx\r\n")),
  );
  cases.push(
    one(
      "chunk extension with a control byte",
      post("Transfer-Encoding: chunked\r\n", "5;a=\x01\r\nhello\r\n0\r\n\r\n"),
    ),
  );
  cases.push(
    one("chunked body without its last chunk", post("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n")),
  );
  cases.push(
    one(
      "trailer with a bad header",
      post("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\nBad Trailer: x\r\n\r\n"),
    ),
  );
  cases.push(one("body shorter than its content-length", post("Content-Length: 100\r\n", "only ten!!")));
  cases.push(
    one("body longer than its content-length", post("Content-Length: 2\r\n", "far more than two bytes")),
  );
  cases.push(one("LF-only lines", `GET ${good} HTTP/1.1\nHost: ${upstream}\n\n`));
  cases.push(one("CRLFs before the request", `\r\n\r\n${get(good)}`));

  // Pipelining.
  cases.push(one("two pipelined requests", get(good) + get(good), 200));
  cases.push(one("a request then garbage", get(good) + "\x00garbage\r\n\r\n", 200));
  cases.push(one("a request then a CONNECT", get(good) + connect(upstream), 200));
  cases.push(one("a request then a bad port", get(good) + get("http://127.0.0.1:99999/"), 200));
  cases.push(one("50 pipelined requests", get(good).repeat(50)));
  cases.push(
    one("300 pipelined requests to a refused host", get("http://not.listed.example/").repeat(300), 403),
  );

  // Nothing, garbage, incomplete requests (the client half-closes after each case).
  cases.push(one("nothing", ""));
  cases.push(one("only line ends", "\r\n".repeat(100)));
  cases.push(one("NUL bytes", "\x00".repeat(100), 400));
  cases.push(one("a partial request line", "GET http://127.0.0.1:", 400));
  cases.push(one("partial headers", `GET ${good} HTTP/1.1\r\nHost: x\r\nX-Half: `, 400));
  cases.push(one("a megabyte of junk", "j".repeat(1 << 20)));
  const random = seededRandom(seed);
  for (let index = 0; index < 30; index += 1) {
    const length = 1 + Math.floor(random() * 2_000);
    const junk = Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));
    cases.push({ name: `random bytes #${index} (${length})`, chunks: [junk] });
  }

  // Seeded mutations of good requests, never to a port of this machine other than the upstream's.
  const templates = [
    get(good, `Host: ${upstream}\r\nUser-Agent: fuzz\r\nAccept: */*\r\n`),
    post("Content-Length: 5\r\n", "hello"),
    post("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"),
    connect(upstream) + get("/good", ""),
  ];
  for (let index = 0; index < 120; index += 1) {
    const template = templates[index % templates.length] ?? "";
    const mutated = mutateSafely(template, random, port);
    cases.push({ name: `mutated request #${index}`, chunks: splitRandomly(bytes(mutated), random) });
  }
  return cases;
}

/** Odd and malformed upstream answers, by class, then seeded mutations of good ones. */
export function upstreamCases(seed = 20_240_612): UpstreamCase[] {
  const end = (name: string, text: string, status?: number): UpstreamCase => ({
    name,
    reply: { bytes: bytes(text), then: "end" },
    ...(status === undefined ? {} : { status }),
  });
  const ok = (headers: string, body = "ok") => `HTTP/1.1 200 OK\r\n${headers}\r\n${body}`;
  const cases: UpstreamCase[] = [];
  const statusLines: Array<[string, number | undefined]> = [
    ["099 Odd", 502],
    ["000 Zero", 502],
    ["001 X", 502],
    ["010 X", 502],
    ["199 X", 502],
    ["600 X", 502],
    ["999 X", 502],
    ["1000 X", 502],
    ["abc X", 502],
    ["20 X", 502],
    ["", 502],
    ["200", 200],
    ["200 ", 200],
    ["404 Not Found", 404],
    ["599 X", 599],
    ["200 O\x01K", 200],
    ["200 O\x7fK", 200],
    ["200 O\xffK", 200],
    ["200 O\x00K", undefined],
    ["200 O\tK", 200],
    ["200 O\rK", undefined],
    [`200 ${"m".repeat(10_000)}`, 200],
    [`200 ${"m".repeat(20_000)}`, 502],
  ];
  for (const [line, status] of statusLines) {
    cases.push(
      end(
        `status line ${JSON.stringify(line.slice(0, 16))}`,
        `HTTP/1.1 ${line}\r\nContent-Length: 2\r\n\r\nok`,
        status,
      ),
    );
  }
  cases.push(end("100 and nothing after", "HTTP/1.1 100 Continue\r\n\r\n", 502));
  cases.push(end("100 then 200", "HTTP/1.1 100 Continue\r\n\r\n" + ok("Content-Length: 2\r\n"), 200));
  cases.push(
    end(
      "50 informational answers then 200",
      "HTTP/1.1 102 Processing\r\n\r\n".repeat(50) + ok("Content-Length: 2\r\n"),
      200,
    ),
  );
  cases.push(
    end(
      "101 unasked",
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\nraw",
      502,
    ),
  );
  cases.push(end("204 with a body", "HTTP/1.1 204 No Content\r\n\r\nbody that should not be", 204));
  cases.push(
    end("304 with a content-length", "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", 304),
  );
  cases.push(end("HTTP/1.0 body until close", "HTTP/1.0 200 OK\r\n\r\nbody until close", 200));
  cases.push(end("HTTP/2.0 status line", "HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nok"));
  cases.push(end("RTSP status line", "RTSP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"));
  cases.push(end("HTTP/0.9 answer", "just a body", 502));
  cases.push(end("nothing at all", "", 502));
  cases.push(end("LF-only lines", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", 502));
  cases.push(
    end("line ends before the status line", "\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
  );
  cases.push(end("half a status line", "HTTP/1.1 20", 502));
  cases.push(end("half the headers", "HTTP/1.1 200 OK\r\nContent-Le", 502));
  const headerCases: Array<[string, string, number | undefined]> = [
    ["value with \\x01", "X: a\x01b\r\nContent-Length: 2\r\n", undefined],
    ["value with DEL", "X: a\x7fb\r\nContent-Length: 2\r\n", undefined],
    ["value with NUL", "X: a\x00b\r\nContent-Length: 2\r\n", undefined],
    ["value with latin-1", "X: \xe4\xff\r\nContent-Length: 2\r\n", 200],
    ["name with a space", "Bad Name: v\r\nContent-Length: 2\r\n", 502],
    ["name with parentheses", "(x): v\r\nContent-Length: 2\r\n", 502],
    ["empty name", ": v\r\nContent-Length: 2\r\n", 502],
    ["line without a colon", "nocolon\r\nContent-Length: 2\r\n", 502],
    ["folded value", "X: a\r\n b\r\nContent-Length: 2\r\n", undefined],
    ["200 headers", "X-Many: v\r\n".repeat(200) + "Content-Length: 2\r\n", 200],
    ["5000 headers", "X: v\r\n".repeat(5_000) + "Content-Length: 2\r\n", undefined],
    ["a 20 KiB header", `X: ${"b".repeat(20_000)}\r\nContent-Length: 2\r\n`, 502],
    ["two different content-lengths", "Content-Length: 2\r\nContent-Length: 3\r\n", 502],
    ["two equal content-lengths", "Content-Length: 2\r\nContent-Length: 2\r\n", undefined],
    ["content-length and transfer-encoding", "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n", 502],
    ["negative content-length", "Content-Length: -1\r\n", 502],
    ["content-length 1e3", "Content-Length: 1e3\r\n", 502],
    ["content-length overflowing", "Content-Length: 99999999999999999999999\r\n", 502],
    ["content-length longer than the body", "Content-Length: 100\r\n", 200],
    ["transfer-encoding gzip, body until close", "Transfer-Encoding: gzip\r\n", 200],
    [
      "transfer-encoding chunked twice",
      "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
      undefined,
    ],
    [
      "three set-cookies",
      "Set-Cookie: a=1\r\nSet-Cookie: b=2\r\nSet-Cookie: c=\xff\r\nContent-Length: 2\r\n",
      200,
    ],
    [
      "hop-by-hop headers",
      "Connection: close, x-secret\r\nX-Secret: 1\r\nKeep-Alive: junk\r\nUpgrade: h2c\r\nProxy-Authenticate: x\r\nContent-Length: 2\r\n",
      200,
    ],
  ];
  for (const [name, headers, status] of headerCases) cases.push(end(`header: ${name}`, ok(headers), status));
  const chunked = (body: string) => ok("Transfer-Encoding: chunked\r\n", body);
  cases.push(end("chunk size not hex", chunked("zz\r\nok\r\n0\r\n\r\n")));
  cases.push(end("chunk size overflowing", chunked("ffffffffffffffffffff\r\nok\r\n")));
  cases.push(end("chunked without its last chunk", chunked("2\r\nok\r\n"), 200));
  cases.push(end("chunked with bad trailers", chunked("2\r\nok\r\n0\r\nBad Trailer: x\r\n\r\n")));
  cases.push(
    end("answer then another answer", ok("Content-Length: 2\r\n") + ok("Content-Length: 2\r\n"), 200),
  );
  cases.push(end("answer then garbage", ok("Content-Length: 2\r\n") + "\x00garbage", 200));
  cases.push({ name: "reset at once", reply: { bytes: bytes(""), then: "reset" }, status: 502 });
  cases.push({
    name: "reset mid-headers",
    reply: { bytes: bytes("HTTP/1.1 200 OK\r\nX: "), then: "reset" },
    status: 502,
  });
  cases.push({
    name: "reset mid-body",
    reply: { bytes: bytes(ok("Content-Length: 100\r\n")), then: "reset" },
  });
  cases.push({ name: "reset mid-chunk", reply: { bytes: bytes(chunked("10\r\nabc")), then: "reset" } });
  cases.push({ name: "stall before answering", reply: { bytes: bytes(""), then: "stall" }, status: 502 });
  cases.push({
    name: "stall mid-body",
    reply: { bytes: bytes(ok("Content-Length: 100\r\n")), then: "stall" },
    status: 200,
  });

  const random = seededRandom(seed);
  const templates = [
    ok("Content-Type: text/plain\r\nContent-Length: 5\r\n", "hello"),
    chunked("5\r\nhello\r\n0\r\n\r\n"),
    "HTTP/1.1 404 Not Found\r\nSet-Cookie: a=b\r\nSet-Cookie: c=d\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.0 200 OK\r\nX-Note: v\r\n\r\nbody until close",
  ];
  for (let index = 0; index < 100; index += 1) {
    const template = templates[index % templates.length] ?? "";
    const then = random() < 0.15 ? "reset" : "end";
    cases.push({ name: `mutated answer #${index}`, reply: { bytes: bytes(mutate(template, random)), then } });
  }
  return cases;
}

const ODD_BYTES = [
  0x00, 0x01, 0x09, 0x0a, 0x0d, 0x20, 0x22, 0x25, 0x2f, 0x3a, 0x40, 0x5b, 0x5d, 0x7f, 0x80, 0xff,
];
const ODD_STRINGS = [
  "\r\n",
  ":",
  " ",
  "\x00",
  "%",
  "[",
  "]",
  "@",
  "\r",
  "\n",
  "\t",
  "\xff",
  "\r\n\r\n",
  "HTTP/1.1",
  "99999",
  "Transfer-Encoding: chunked\r\n",
  "Content-Length: 3\r\n",
  "Content-Length: -1\r\n",
  "X: \x01\r\n",
];

/** One to four random edits: a byte replaced, a string inserted, a range deleted or doubled, a cut. */
export function mutate(text: string, random: () => number): string {
  let result = text;
  const edits = 1 + Math.floor(random() * 4);
  for (let edit = 0; edit < edits; edit += 1) {
    const at = Math.floor(random() * (result.length + 1));
    const span = 1 + Math.floor(random() * 10);
    const kind = Math.floor(random() * 6);
    if (kind === 0) {
      const byte = ODD_BYTES[Math.floor(random() * ODD_BYTES.length)] ?? Math.floor(random() * 256);
      result = result.slice(0, at) + String.fromCharCode(byte) + result.slice(at + 1);
    } else if (kind === 1) {
      result =
        result.slice(0, at) +
        (ODD_STRINGS[Math.floor(random() * ODD_STRINGS.length)] ?? "") +
        result.slice(at);
    } else if (kind === 2) {
      result = result.slice(0, at) + result.slice(at + span);
    } else if (kind === 3) {
      result = result.slice(0, at + span) + result.slice(at, at + span) + result.slice(at + span);
    } else if (kind === 4) {
      result = result.slice(0, Math.max(at, 1));
    } else {
      const range = result.slice(at, at + span);
      result =
        result.slice(0, at) +
        (range === range.toUpperCase() ? range.toLowerCase() : range.toUpperCase()) +
        result.slice(at + span);
    }
  }
  return result;
}

/**
 * A mutation that names no port of this machine but the upstream's (or one out of range): the fuzz
 * must not send junk to other services listening here.
 */
function mutateSafely(text: string, random: () => number, upstreamPort: string): string {
  for (;;) {
    const mutated = mutate(text, random);
    const ports = [...mutated.matchAll(/:(\d+)/g)].map((match) => match[1] ?? "");
    const strayPort = ports.some((found) => {
      const number = Number(found);
      return found !== upstreamPort && number >= 1 && number <= 65_535;
    });
    if (!strayPort) return mutated;
  }
}

/** The bytes in one to three writes, cut at random places. */
function splitRandomly(data: Buffer, random: () => number): Buffer[] {
  const cuts = [
    0,
    ...Array.from({ length: Math.floor(random() * 3) }, () => Math.floor(random() * data.length)),
    data.length,
  ];
  cuts.sort((left, right) => left - right);
  return cuts
    .slice(1)
    .map((cut, index) => data.subarray(cuts[index], cut))
    .filter((chunk) => chunk.length > 0);
}
