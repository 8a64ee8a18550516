import type { CliLineParser } from "./cli-adapter.js";

/**
 * `output: text`: every stdout line is part of the answer, and progress. The text is collected and
 * becomes the result when the tool exits 0; an empty stdout is "exit 0 but no result".
 */
export function createTextLineParser(): CliLineParser {
  return (line, transcript) => {
    transcript.thoughtChunk(`${line}\n`);
    return "progress";
  };
}
