import { getRetentionSettings, updateRetentionSettings } from "@/lib/domain/settings/retention";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * GET /api/v1/settings/retention → `{"event_retention_days", "export_before_delete", "updated_by", "updated_at"}`: the
 * workspace's retention settings (decision 0054); without saved ones the defaults (null = keep events forever, false).
 * Signed-in people of any role. Errors: 401, 403 (runtime API keys).
 */
export const GET = apiRoute(async ({ ctx }) => getRetentionSettings(ctx));

/**
 * PUT /api/v1/settings/retention body `{"event_retention_days": 1–36500 | null, "export_before_delete": boolean}` → 200
 * the saved settings, audited `settings.retention_changed` (before and after). Owners and admins.
 * Errors: 400 (body) · 401 · 403 · 422 (a field; nothing is written).
 */
export const PUT = apiRoute(async ({ req, ctx }) =>
  updateRetentionSettings(ctx, { body: await readJson(req, 4 * 1024) }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PATCH, DELETE, OPTIONS } = otherMethods("GET", "PUT");
