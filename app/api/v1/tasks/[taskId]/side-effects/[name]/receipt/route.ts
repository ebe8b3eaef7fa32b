import { withSigningKey } from "@/lib/server/verb-context";
import { withGenericPlans } from "@/db";
import { recordReceipt } from "@/lib/domain/side-effects/receipt";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/**
 * POST /api/v1/tasks/{task_id}/side-effects/{name}/receipt
 * body `{"idempotency_key", "external_operation_id", "result_digest"?, "completed_at", "attempt"}` →
 * 200 `{"status": "completed", "receipt", "replayed", "warnings"}` (an identical second receipt is a no-op, replayed
 * true; `warnings: ["completed_before_intent"]` when it claims a time before the intent was registered).
 * body `{"idempotency_key", "outcome": "not_applied", "error", "attempt"}` (the tool owner's word that nothing of the
 * write was applied) → 200 `{"status": "not_started" | "approved", "outcome": "not_applied", "error", "replayed",
 * "warnings"}`: an in-flight write returns to where a retry starts and the same key gets a fresh go (decision 0029);
 * `error` is kept with credentials redacted and cut to 1000 characters (`warnings: ["error_truncated"]`).
 * A receipt that is not applied is kept as evidence for the person who reconciles (`details.kept_as_evidence`):
 * 409 reconcile_required (the effect is unknown) · 409 stale_attempt (an older attempt) · 409 no_intent (no intent yet;
 * it completes the effect when the intent arrives) · 409 receipt_conflict (a different receipt is stored).
 * Other errors: 422 idempotency_key_mismatch / validation_failed · 400 key · 404 unknown task.
 */
export const POST = apiRoute<{ taskId: string; name: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  // Hot path: its statements run on generic plans, planned once per connection (decision 0022).
  return withGenericPlans(async () =>
    recordReceipt(withSigningKey(ctx), { taskId: params.taskId, name: params.name, body }),
  );
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
