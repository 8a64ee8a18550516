import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolHarness } from "../support/tool-harness.js";

/** A value with a space, `@`, `/`, `+`, a double quote, a single quote and a character outside ASCII. */
const SECRET = "p@ss wörd/+\"x:Z9-l'ong";

let harness: ToolHarness;

beforeAll(() => {
  harness = new ToolHarness({ permissions: { allow: ["shell"] }, secrets: { k: SECRET } });
});
afterAll(() => harness.dispose());

/** Runs Python on the secret (read from stdin as `s`) and prints `expression`. */
const python = (expression: string, imports = "") =>
  `printf %s {{secret:k}} | python3 -c 'import sys${imports}; s = sys.stdin.read(); print(${expression})'`;

/**
 * The output as a reader would undo its disguise in one step: colour codes dropped, quotes and
 * backslashes dropped, NFC, lowercase. None of these may show a recognisable piece of the value.
 */
function triviallyDecoded(text: string): string[] {
  const plain = text.replace(new RegExp(String.raw`\u001b\[[0-9;]*[A-Za-z]`, "g"), "");
  return [text, plain, plain.normalize("NFC"), plain.replace(/['"\\]/g, "").normalize("NFC")].map((form) =>
    form.toLowerCase(),
  );
}

/** Pieces of the value a reader would recognise (lowercase). */
const PIECES = ["p@ss w", "rd/+", "x:z9", "z9-l", "ong"].map((piece) => piece.toLowerCase());

function expectMasked(text: string): void {
  expect(text).toContain("[secret:k]");
  expect(text).not.toContain(SECRET);
  for (const decoded of triviallyDecoded(text)) {
    for (const piece of PIECES.filter((piece) => piece !== "ong")) expect(decoded).not.toContain(piece);
  }
}

describe("a secret printed by real programs in a disguise of their own", () => {
  it.each([
    ["printf %q", "printf '%q\\n' {{secret:k}}"],
    ["the ${x@Q} quoting", `X={{secret:k}} bash -c 'echo "\${X@Q}"'`],
    ["a set -x trace", `X={{secret:k}} bash -xc 'true "$X"'`],
    ["grep --color inside the value", "printf '%s\\n' {{secret:k}} | grep --color=always 'rd/+'"],
    ["Python repr", python("repr(s)")],
    ["Python ascii", python("ascii(s)")],
    ["Python repr of the bytes", python("repr(s.encode())")],
    [
      "a CSV field",
      'printf %s {{secret:k}} | python3 -c \'import sys, csv; csv.writer(sys.stdout).writerow(["a", sys.stdin.read(), "b"])\'',
    ],
    ["html.escape", python("html.escape(s)", ", html")],
    [
      "HTML named entities",
      python(
        `"".join("&%s;" % html.entities.codepoint2name[ord(c)] if ord(c) in html.entities.codepoint2name else c for c in s)`,
        ", html.entities",
      ),
    ],
    ["HTML decimal entities", python('"".join("&#%d;" % ord(c) for c in s)')],
    ["HTML hex entities", python('"".join("&#x%X;" % ord(c) for c in s)')],
    ["quote(s, safe='')", python('urllib.parse.quote(s, safe="")', ", urllib.parse")],
    ["every byte percent-encoded", python('"".join("%%%02x" % b for b in s.encode())')],
    ["jq @uri", `jq -rn --arg s {{secret:k}} '$s | @uri'`],
    ["JSON with every character \\u-escaped", python('"".join("\\\\u%04x" % ord(c) for c in s)')],
    ["\\U escapes", python('"".join("\\\\U%08X" % ord(c) for c in s)')],
    ["octal escapes", python('"".join("\\\\%03o" % b for b in s.encode())')],
    ["sed -n l", "printf '%s\\n' {{secret:k}} | sed -n l"],
    ["cat -v", "printf '%s\\n' {{secret:k}} | cat -v"],
    ["quoted-printable", python("quopri.encodestring(s.encode()).decode()", ", quopri")],
    ["base32", "printf %s {{secret:k}} | base32 -w0"],
    ["base32 after three bytes, wrapped", "printf 'abc%s' {{secret:k}} | base32 -w 16"],
    ["base32hex", "printf %s {{secret:k}} | basenc --base32hex"],
    ["binary", "printf %s {{secret:k}} | basenc --base2msbf"],
    ["hex bytes one by one over two lines (od -An -tx1)", "printf %s {{secret:k}} | od -An -tx1"],
    ["a C array (xxd -i)", "printf %s {{secret:k}} | xxd -i"],
    ["a list of decimal bytes", python("list(s.encode())")],
    ["a Node Uint8Array", `node -e 'console.log(new TextEncoder().encode(process.argv[1]))' {{secret:k}}`],
    [
      "accents transliterated away (iconv //TRANSLIT)",
      "printf %s {{secret:k}} | iconv -f utf-8 -t ascii//TRANSLIT",
    ],
    ["Unicode NFD", python('unicodedata.normalize("NFD", s)', ", unicodedata")],
    ["upper case", python("s.upper()")],
    ["lower case", python("s.lower()")],
    [
      "Perl Data::Dumper with Useqq",
      `perl -MData::Dumper -e '$Data::Dumper::Useqq = 1; print Dumper($ARGV[0])' {{secret:k}}`,
    ],
    ["a JSON string inside a JSON string", python("json.dumps(json.dumps(s))", ", json")],
    [
      "base64 of the value, JSON-escaped as PHP writes it",
      python('json.dumps(base64.b64encode(s.encode()).decode()).replace("/", "\\\\/")', ", json, base64"),
    ],
  ])("masks it through %s", async (_form, command) => {
    const result = await harness.call("shell", { command });

    expect(result).toMatchObject({ ok: true });
    expectMasked(result.output);
    expectMasked(JSON.stringify(harness.events.at(-1)));
  });

  it("masks it in zero-width and bidi characters put between its letters", async () => {
    const result = await harness.call("shell", {
      command: python('"\\u200b".join(s[:12]) + "\\u202e" + s[12:]'),
    });

    expectMasked(result.output);
  });

  it("leaves ordinary output alone", async () => {
    const result = await harness.call("shell", {
      command:
        "printf '%s\\n' 'status: 100% done' \"it's \\\"fine\\\"\" 'C:\\\\new\\\\table' 'a&amp;b' '\\e[1mbold\\e[0m'",
    });

    expect(result.output).not.toContain("[secret:");
    expect(result.output).toContain("status: 100% done");
  });
});
