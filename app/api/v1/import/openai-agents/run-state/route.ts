import { withSigningKey } from "@/lib/server/verb-context";
import { DomainError } from "@/lib/domain/errors";
import { importRunState, readAgentVersion } from "@/lib/domain/imports/import-run-state";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/** RunStates are larger than most bodies (model responses, tool schemas, nested runs). */
const MAX_RUN_STATE_BYTES = 4 * 1024 * 1024;

/**
 * POST /api/v1/import/openai-agents/run-state?task_id=…[&agent_version=…] — body: a serialized RunState of the OpenAI
 * Agents SDK, JavaScript (camelCase) or Python (snake_case), as a JSON object or a JSON string holding one →
 * `{task_id, sdk, schema_version, approvals: [approval ids], receipts: [effect names], unknown: [effect names], warnings}`.
 * A runtime API key, or a signed-in responder, owner or admin. Importing the same state again creates nothing new.
 * Errors: 400 (task_id missing, not JSON), 401, 403 (viewer, approver), 404 (task, also another tenant's), 413,
 * 422 `unsupported_schema_version` / `invalid_run_state` (with `details.problem`; nothing stored; the payload is never
 * quoted; `too_many_calls` / `too_many_approvals` with `details: {limit, value}`: decision 0034). Source: docs/decisions/0013-openai-agents-run-state-import.md;
 * lib/domain/imports/import-run-state.ts.
 */
export const POST = apiRoute(async ({ req, ctx }) => {
  const url = new URL(req.url);
  const taskId = url.searchParams.get("task_id");
  if (!taskId)
    throw new DomainError("bad_request", "task_id is required in the query: ?task_id=<task>.", {
      fields: [{ path: "task_id", message: "required" }],
    });
  const agentVersion = readAgentVersion(url.searchParams.get("agent_version"));
  const body = await readJson(req, MAX_RUN_STATE_BYTES);
  return importRunState(withSigningKey(ctx), { taskId, body, agentVersion });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
