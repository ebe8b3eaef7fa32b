import { NextResponse } from "next/server";
import { withGenericPlans } from "@/db";
import { withSigningKey } from "@/lib/server/verb-context";
import { registerIntent } from "@/lib/domain/side-effects/intent";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/**
 * POST /api/v1/tasks/{task_id}/side-effects/{name}/intent
 * body `{"idempotency_key", "payload_digest", "action", "mutation", "attempt", "tool"?, "lease_seconds"?,
 * "requires_approval"?, "payload"?, "agent"?, "agent_version"?, "repeats"?}` →
 * - 200 `{"decision": "go", "lease_expires_at"}` — first intent; the effect is now in_flight;
 * - 200 `{"decision": "replay", "receipt"}` + header `Idempotent-Replayed: true` — completed, same digest;
 * - 409 gate_stop / gate_replay (a mutation the resume gate does not permit; `details.reasons` as the gate gives them)
 * - 409 stale_attempt (an older attempt than the task's current one) · 409 in_flight (another holder's lease is live)
 * - 409 reconcile_required (outcome unknown) · 403 principal_revoked (any intent) · 403 approval_required
 * - 409 too_many_pending_approvals (the task already holds the most pending approval requests; decision 0034)
 * - 409 duplicate_payload (another effect of the task with the same action and payload digest is in flight, completed
 *   or unknown; `details` name it, its key and status, and a completed one's receipt; `repeats` names it deliberately)
 * - 422 idempotency_key_mismatch (same key, other digest; or key bound elsewhere) · 422 repeats_mismatch (`repeats`
 *   names no identical write of the task) · 422 payload_digest_mismatch (a `payload` whose digest is not
 *   `payload_digest`) · 400 key missing or malformed
 * - 404 unknown task.
 * Source: docs/concepts.md#intent, decision 0029 (duplicates, payload digest).
 */
export const POST = apiRoute<{ taskId: string; name: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  // Hot path: its statements run on generic plans, planned once per connection (decision 0022).
  const out = await withGenericPlans(async () =>
    registerIntent(withSigningKey(ctx), { taskId: params.taskId, name: params.name, body }),
  );
  return NextResponse.json(out, out.decision === "replay" ? { headers: { "Idempotent-Replayed": "true" } } : undefined);
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
