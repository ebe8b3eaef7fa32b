/**
 * Same-origin paths only: used for "back to where you were" redirects after sign-in.
 */

/**
 * Returns `candidate` when it is a path on this site (starts with one "/", no scheme, no host, no backslash
 * tricks), else `fallback`. `//evil.example`, `/\evil.example`, `https://…` and control characters are refused.
 */
export function safeLocalPath(candidate: unknown, fallback = "/tasks"): string {
  if (typeof candidate !== "string" || candidate.length > 2000) return fallback;
  if (!candidate.startsWith("/") || candidate.startsWith("//") || /[\\\u0000-\u001f]/.test(candidate)) return fallback;
  try {
    const base = "http://same.invalid";
    const url = new URL(candidate, base);
    if (url.origin !== base) return fallback;
    return url.pathname + url.search + url.hash;
  } catch {
    return fallback;
  }
}
