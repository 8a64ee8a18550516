import { type Document, isMap, isScalar, visit } from "yaml";

/**
 * The offset of the first key repeated within one map, or undefined. The yaml library's own check
 * (`uniqueKeys: true`) compares each key with every earlier one: 40,000 plain keys held the event
 * loop for 50 s. This walks each map once with a set of its scalar keys (other keys, rare in
 * settings, are compared as the library prints them).
 */
export function findDuplicateKey(document: Document.Parsed): number | undefined {
  let offset: number | undefined;
  visit(document, {
    Map(_key, node) {
      if (!isMap(node)) return undefined;
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = pair.key;
        const name = isScalar(key) ? `s:${String(key.value)}` : `n:${String(key)}`;
        if (seen.has(name)) {
          offset = isScalar(key) ? (key.range?.[0] ?? 0) : 0;
          return visit.BREAK;
        }
        seen.add(name);
      }
      return undefined;
    },
  });
  return offset;
}
