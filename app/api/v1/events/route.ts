import { withGenericPlans } from "@/db";
import { withSigningKey } from "@/lib/server/verb-context";
import { ingestEvents } from "@/lib/domain/events/ingest";
import { apiRoute, readJson, otherMethods, requireJsonContentType } from "@/lib/server/route";

/**
 * POST /api/v1/events — body `{"events": [EventInput, … ≤ 1000]}` (≤ 1 MB).
 * → 200 `{"results": [{"id", "status": "stored"|"duplicate"|"conflict"|"rejected", "error"?, "stored_digest"?, "effect"?}]}`
 * in input order: `duplicate` = the id was received before with the same content; `conflict` = with other content
 * (nothing stored; `stored_digest` is the sha256 of the stored event's RFC 8785 JSON); `effect` = `{name, applied,
 * code?, message?}` for events that move a side effect, saying whether the move was applied and why not.
 * Errors: 400 invalid_json, 413 payload_too_large / too_many_events, 415 unsupported_media_type (`content-type` is
 * not `application/json`, with or without `charset`, or another `…+json` type), 422 validation_failed (not an events
 * envelope), 401, 403 (not a runtime key), 503 database_unavailable (with `Retry-After`). Nothing is stored when the
 * envelope is rejected. Source: docs/concepts.md#events; docs/api.md#runtime-routes.
 */
export const POST = apiRoute(async ({ req, ctx }) => {
  requireJsonContentType(req);
  const body = await readJson(req, undefined, { perItem: true });
  // Hot path: its statements run on generic plans, planned once per connection (decision 0022).
  return withGenericPlans(async () => ingestEvents(withSigningKey(ctx), { body }));
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
