import { createHash } from "node:crypto";

const ALLOWED = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The name a tool is offered to the model under. OpenAI-compatible APIs accept only
 * `[A-Za-z0-9_-]{1,64}`, so `mcp:github/create_issue` becomes `mcp__github__create_issue`; a name
 * still too long keeps its start and gains a short hash, so two long names never collide.
 */
export function modelToolName(name: string): string {
  if (ALLOWED.test(name)) return name;
  const safe = name.replace(/[:/]/g, "__").replace(/[^A-Za-z0-9_-]/g, "_");
  if (safe.length <= 64) return safe;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 8);
  return `${safe.slice(0, 55)}_${hash}`;
}
