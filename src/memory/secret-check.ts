/** How the redactor marks a masked value: `[secret:name]`. */
const MASK = /\[secret:([^\]]*)\]/g;

/**
 * The vault secrets whose values `after` holds more often than `before` did, as the redactor finds
 * them (every spelling and encoding it knows, across entries too). Comparing counts, rather than
 * refusing any masked value, lets a memory that an operator left a value in still be edited, while
 * no edit can add one, whether whole or assembled from pieces.
 */
export function addedSecrets(before: string, after: string, redact: (text: string) => string): string[] {
  const counted = (text: string) => {
    const counts = new Map<string, number>();
    const literal = new Map<string, number>();
    for (const match of redact(text).matchAll(MASK))
      counts.set(match[1] ?? "", (counts.get(match[1] ?? "") ?? 0) + 1);
    for (const match of text.matchAll(MASK))
      literal.set(match[1] ?? "", (literal.get(match[1] ?? "") ?? 0) + 1);
    for (const [name, count] of literal) counts.set(name, (counts.get(name) ?? 0) - count);
    return counts;
  };
  const earlier = counted(before);
  return [...counted(after)]
    .filter(([name, count]) => count > (earlier.get(name) ?? 0))
    .map(([name]) => name);
}
