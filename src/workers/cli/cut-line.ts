import type { CliLineParser, LineVerdict } from "./cli-adapter.js";
import { MAX_CLI_LINE_CHARACTERS, cliCutNote } from "./cli-output-limits.js";
import type { CliTranscript } from "./cli-transcript.js";

/**
 * A stdout line longer than `MAX_CLI_LINE_CHARACTERS`, already cut. For plain text it is read as
 * text with a note where it was cut; in a JSON stream the cut line is no longer JSON, so it is
 * reported as ignored (a `warning` event saying why) rather than parsed. Either way it is progress:
 * the tool was printing.
 */
export function readCutLine(
  line: string,
  droppedCharacters: number,
  structured: boolean,
  parseLine: CliLineParser,
  transcript: CliTranscript,
): LineVerdict {
  if (!structured) {
    return parseLine(
      transcript.cutEnd(line) + cliCutNote(droppedCharacters, MAX_CLI_LINE_CHARACTERS, "a line of output"),
      transcript,
    );
  }
  transcript.ignoredLine(
    line,
    `longer than ${MAX_CLI_LINE_CHARACTERS.toLocaleString("en-US")} characters: ` +
      `${droppedCharacters.toLocaleString("en-US")} more were dropped`,
  );
  return "progress";
}
