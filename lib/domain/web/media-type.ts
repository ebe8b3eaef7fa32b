/**
 * The media type a request declares for its body (RFC 9110 §8.3): the `content-type` header without its parameters,
 * lower case. One reading for every route that refuses a body by its type (415).
 */

/** `application/json` from `Application/JSON; charset=utf-8`; empty when the header is missing. */
export function mediaType(req: Request): string {
  return (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

/** True for `application/json` and the structured-syntax `…+json` types (RFC 6839), e.g. `application/merge-patch+json`. */
export function isJsonMediaType(type: string): boolean {
  return type === "application/json" || /^application\/[a-z0-9!#$&^_.-]+\+json$/.test(type);
}
