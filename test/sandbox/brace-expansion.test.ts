import { describe, expect, it } from "vitest";
import { expandBraces } from "../../src/sandbox/brace-expansion.js";
import type { BuiltWord } from "../../src/sandbox/built-word.js";

/** A word as written with `'…'` quoting some of it: the quoted characters are not bare. */
function written(text: string): BuiltWord {
  const word: BuiltWord = { text: "", bare: [] };
  let quoted = false;
  for (const character of text) {
    if (character === "'") quoted = !quoted;
    else {
      word.text += character;
      word.bare.push(!quoted);
    }
  }
  return word;
}

const expanded = (text: string) => expandBraces(written(text), "*").map((word) => word.text);

describe("brace expansion", () => {
  it("makes one word per alternative, nested and repeated braces too", () => {
    expect(expanded("gates/{a,b}.sh")).toEqual(["gates/a.sh", "gates/b.sh"]);
    expect(expanded("{x,y{1,2}}.sh")).toEqual(["x.sh", "y1.sh", "y2.sh"]);
    expect(expanded("{a,b}{c,d}")).toEqual(["ac", "ad", "bc", "bd"]);
  });

  it("leaves quoted braces, braces without a comma and unclosed ones as written", () => {
    expect(expanded("'{a,b}'.sh")).toEqual(["{a,b}.sh"]);
    expect(expanded("{a}.sh")).toEqual(["{a}.sh"]);
    expect(expanded("{}")).toEqual(["{}"]);
    expect(expanded("{a,b.sh")).toEqual(["{a,b.sh"]);
  });

  it("reads a sequence as any text", () => {
    expect(expanded("gate{1..3}.sh")).toEqual(["gate*.sh"]);
    expect(expanded("gates/{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}.sh")).toEqual(["gates/*.sh"]);
  });
});
