/** Errors of reaching the database, as opposed to the database refusing a statement. */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    // SQLSTATE class 08 (connection exception), 57P (operator intervention: shutdown), 53 (resources).
    if (code.startsWith("08") || code.startsWith("57P") || code.startsWith("53")) return true;
    if (["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH"].includes(code))
      return true;
  }
  return /connection|terminat|timeout/i.test(error.message);
}
