/** Each object's text, by the object: weak, so kept for as long as the object is. */
const texts = new WeakMap<object, string>();

/**
 * An object's JSON text as an item of a JSON list (`null` for one JSON has no text for, a
 * function's `toJSON` giving undefined), made once per object: the objects given here are never
 * changed once made. A chat message is written twice, first in its run's checkpoint line, then in
 * every request body that sends it (request-body.ts), and its text (the escapes of a file's lines,
 * say) is the costly part of both: the first makes it, the second finds it. A message the
 * checkpoint's masking changed is a copy of its own, with a text of its own.
 */
export function jsonItemText(item: object): string {
  let text = texts.get(item);
  if (text === undefined) {
    text = JSON.stringify(item) ?? "null";
    texts.set(item, text);
  }
  return text;
}
