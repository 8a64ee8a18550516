/** A memory tool's edit of the memory text: the new text, or why it cannot be made (told to the model). */
export type MemoryEdit = { ok: true; content: string; unchanged?: boolean } | { ok: false; message: string };

/**
 * `memory_add`: the text as a new entry at the end, a blank line after the one before. An entry the
 * memory already holds word for word is not added twice.
 */
export function addEntry(content: string, text: string): MemoryEdit {
  const entry = text.trim();
  if (entry === "") return { ok: false, message: "give the text to remember" };
  if (content.includes(entry)) return { ok: true, content, unchanged: true };
  const before = content.trimEnd();
  return { ok: true, content: `${before === "" ? "" : `${before}\n\n`}${entry}\n` };
}

/**
 * `memory_replace`: the one occurrence of `old` replaced by `replacement`. A passage found nowhere,
 * or in several places, is refused: the model must quote the memory exactly, and enough of it.
 */
export function replacePassage(content: string, old: string, replacement: string): MemoryEdit {
  const found = occurrences(content, old);
  if (!found.ok) return found;
  const start = found.index;
  return {
    ok: true,
    content: tidy(content.slice(0, start) + replacement.trim() + content.slice(start + old.length)),
  };
}

/** `memory_remove`: the one occurrence of `text` taken out, and the blank lines it leaves joined. */
export function removePassage(content: string, text: string): MemoryEdit {
  return replacePassage(content, text, "");
}

function occurrences(
  content: string,
  passage: string,
): { ok: true; index: number } | { ok: false; message: string } {
  if (passage.trim() === "") return { ok: false, message: "quote the passage of your memory to change" };
  const index = content.indexOf(passage);
  if (index === -1) {
    return {
      ok: false,
      message: "that passage is not in your memory; quote it exactly as your memory shows it",
    };
  }
  if (content.indexOf(passage, index + 1) !== -1) {
    return {
      ok: false,
      message: "that passage is in your memory more than once; quote more of it, so it is found once",
    };
  }
  return { ok: true, index };
}

/** At most one blank line between entries, none at the start, one newline at the end (or nothing). */
function tidy(content: string): string {
  const joined = content
    .replace(/\n{3,}/g, "\n\n")
    .replace(/^\s*\n/, "")
    .trimEnd();
  return joined === "" ? "" : `${joined}\n`;
}
