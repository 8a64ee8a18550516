/** How much of a crashed CLI's stderr its error carries. */
export const STDERR_EXCERPT_LINES = 20;
export const STDERR_EXCERPT_BYTES = 4_096;

const MASK = "***";
/** Variable names whose values are secrets: masked wherever the CLI printed them. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH/i;
/** Shapes of well-known keys and tokens, masked even when agentd never saw their value. */
const SECRET_SHAPES: readonly RegExp[] = [
  /\b(sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{16,}/g, // OpenAI, Anthropic (sk-ant-…)
  /\bAIza[0-9A-Za-z_-]{30,}/g, // Google API keys
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, // Slack
  /\bya29\.[0-9A-Za-z_-]{20,}/g, // Google OAuth access tokens
  /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, // JWTs
];
/** `Bearer x`, `api_key=x`, `"token": "x"`: the value after a secret-looking name. */
const NAMED_VALUE =
  /\b(bearer\s+|(?:[a-z0-9_-]*(?:api[_-]?key|token|secret|password|passwd)[a-z0-9_-]*)["']?\s*[:=]\s*["']?)([^\s"',;]{4,})/gi;

/**
 * Masks secrets in a CLI's output: the values of the child's secret-looking variables (its API key),
 * the vault's values through `redact`, known key shapes, and the value after `Bearer`, `api_key=`,
 * `"token":`. Longer values first, so a value that contains another is masked whole.
 */
export function maskCliOutput(
  text: string,
  environment: Readonly<Record<string, string | undefined>>,
  redact: (text: string) => string = (same) => same,
): string {
  const values = Object.entries(environment)
    .filter(([name, value]) => SECRET_NAME.test(name) && value !== undefined && value.length >= 6)
    .map(([, value]) => value as string)
    .sort((a, b) => b.length - a.length);
  let masked = text;
  for (const value of values) masked = masked.split(value).join(MASK);
  masked = redact(masked);
  for (const shape of SECRET_SHAPES) masked = masked.replace(shape, MASK);
  return masked.replace(NAMED_VALUE, (_match, name: string) => `${name}${MASK}`);
}

/**
 * The last lines of a crashed CLI's stderr, for its error: at most 20 lines and 4 KB (the end
 * kept), blank lines dropped. Mask the text first: this is shown to people and stored.
 */
export function stderrExcerpt(stderr: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "")
    .slice(-STDERR_EXCERPT_LINES);
  let excerpt = lines.join("\n");
  if (Buffer.byteLength(excerpt) > STDERR_EXCERPT_BYTES) {
    const tail = Buffer.from(excerpt).subarray(-STDERR_EXCERPT_BYTES).toString("utf8");
    // Cut at a line start, so no line is shown from its middle (and no character half-decoded):
    // a line cut at its start could begin inside a secret's value, past what masks whole values.
    const start = tail.indexOf("\n");
    excerpt =
      start === -1
        ? `…\n[its last line is longer than ${STDERR_EXCERPT_BYTES.toLocaleString("en-US")} bytes: not quoted]`
        : `…\n${tail.slice(start + 1)}`;
  }
  return excerpt;
}
