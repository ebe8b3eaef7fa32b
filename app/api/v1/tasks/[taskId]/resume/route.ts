import { withGenericPlans } from "@/db";
import { withSigningKey } from "@/lib/server/verb-context";
import { askGate } from "@/lib/domain/gate/ask";
import { apiRoute, readOptionalJson, otherMethods } from "@/lib/server/route";

/**
 * POST /api/v1/tasks/{task_id}/resume — the resume gate. Optional body `{"tool_definitions": {name: sha256},
 * "attempt": n}` (the tools the runtime would resume with, and the sandbox attempt asking: a live intent of an older
 * attempt then holds new writes back). The intent route answers new writes from the same verdict. → 200 `{"verdict": "resume"|"replay"|"stop", "reasons": [{"code",
 * "message", "target"}], "next_phase", "permitted_side_effects": [...]}`. Errors: 401, 404, 422.
 * Source: docs/concepts.md#resume-gate.
 */
export const POST = apiRoute<{ taskId: string }>(async ({ req, ctx, params }) => {
  const body = await readOptionalJson(req);
  // Hot path: its statements run on generic plans, planned once per connection (decision 0022).
  return withGenericPlans(async () => askGate(withSigningKey(ctx), { taskId: params.taskId, body }));
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
