import { acceptToolDefinition } from "@/lib/domain/gate/accept-tool";
import { withSigningKey } from "@/lib/server/verb-context";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/**
 * POST /api/v1/tasks/{task_id}/tool-definitions/{tool}/accept — a signed-in approver, admin or owner accepts the changed
 * definition of a tool (decision 0033): body `{"definition_digest": "<sha256 hex>"}`, the latest definition the server
 * received for it → 200 `{"task_id", "tool", "definition_digest", "previous_digest", "accepted_by"}`; audited. Ends the
 * `tool_definition_changed` stop; a runtime's checkpoint never does. Errors: 403 (runtime API key, or a role that may
 * not) · 404 · 409 conflict (nothing changed, or another digest is the latest) · 422.
 */
export const POST = apiRoute<{ taskId: string; tool: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  return acceptToolDefinition(withSigningKey(ctx), { taskId: params.taskId, tool: params.tool, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
