/**
 * The OpenAPI 3.1 description of the runtime API v1, with request bodies generated from the same zod schemas
 * the routes validate with (DESIGN.md "Runtime API": "described by an OpenAPI document").
 */
import { z } from "zod";
import { eventInputSchema } from "@/lib/domain/events/schema";
import { resumeBodySchema } from "@/lib/domain/gate/ask";
import { lookupBodySchema } from "@/lib/domain/settings/lookups";
import { restorePrincipalBodySchema, revokePrincipalBodySchema } from "@/lib/domain/settings/principals";
import { createApiKeyBodySchema } from "@/lib/domain/tenancy/api-keys";
import { intentBodySchema } from "@/lib/domain/side-effects/intent";
import { receiptBodySchema } from "@/lib/domain/side-effects/receipt";
import { reconcileBodySchema } from "@/lib/domain/side-effects/reconcile";
import { DEFAULT_PAGE, MAX_PAGE } from "@/lib/domain/tasks/read";
import { taskRecordSchema } from "@/lib/domain/tasks/record";

const schema = (s: z.ZodType) => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
};

const json = (ref: string) => ({ content: { "application/json": { schema: { $ref: `#/components/schemas/${ref}` } } } });
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [String(c), { description: ERROR_TEXT[c] ?? "Error", ...json("Error") }]));
const ERROR_TEXT: Record<number, string> = {
  400: "Malformed request (not JSON, bad key, bad cursor, limit out of range)",
  401: "No or invalid credentials",
  403: "Not allowed for this caller",
  404: "Unknown task or effect (also another tenant's)",
  409: "Conflict with the current state",
  413: "Body over 1 MB or more than 1000 events",
  422: "Validation failed; the message names the field",
};
const taskId = { name: "task_id", in: "path", required: true, schema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$" } };
const effect = { name: "name", in: "path", required: true, schema: { type: "string" } };
const ok = (description: string, ref?: string) => ({ "200": { description, ...(ref ? json(ref) : {}) } });

/** Builds the document (cheap; called per request). */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: {
      title: "Run Custody runtime API",
      version: "1",
      description:
        "Agent runtimes report events and checkpoints, register side-effect intents and receipts, and ask the resume gate. " +
        "Authenticate with a tenant API key: `Authorization: Bearer <key>`. Errors are `{error: {code, message, details?}}`.",
    },
    components: {
      securitySchemes: { runtimeKey: { type: "http", scheme: "bearer" } },
      schemas: {
        Error: {
          type: "object",
          required: ["error"],
          properties: { error: { type: "object", required: ["code", "message"], properties: { code: { type: "string" }, message: { type: "string" }, details: {} } } },
        },
        Event: schema(eventInputSchema),
        EventBatch: { type: "object", required: ["events"], properties: { events: { type: "array", maxItems: 1000, items: { $ref: "#/components/schemas/Event" } } } },
        TaskRecord: schema(taskRecordSchema),
        Intent: schema(intentBodySchema),
        Receipt: schema(receiptBodySchema),
        Reconcile: schema(reconcileBodySchema),
        ResumeRequest: schema(resumeBodySchema),
        Lookup: schema(lookupBodySchema),
        CreateApiKey: schema(createApiKeyBodySchema),
        RevokePrincipal: schema(revokePrincipalBodySchema),
        RestorePrincipal: schema(restorePrincipalBodySchema),
      },
    },
    security: [{ runtimeKey: [] }],
    paths: {
      "/api/health": { get: { summary: "Liveness once migrations are applied", security: [], responses: ok("`{ok: true}`") } },
      "/api/v1/events": {
        post: {
          summary: "Report a batch of events (≤ 1000, ≤ 1 MB); idempotent by event id",
          requestBody: { required: true, ...json("EventBatch") },
          responses: { ...ok("`{results: [{id, status: stored|duplicate|rejected, error?}]}`"), ...errors(400, 401, 403, 413, 422) },
        },
      },
      "/api/v1/tasks": {
        get: {
          summary: "Tasks, newest first (keyset pagination: pass next_cursor back as cursor)",
          parameters: [
            { name: "cursor", in: "query", schema: { type: "string" } },
            {
              name: "limit",
              in: "query",
              description: `Page size, 1–${MAX_PAGE} (default ${DEFAULT_PAGE}). A larger value is refused with 400, not capped.`,
              schema: { type: "integer", minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE },
            },
            {
              name: "q",
              in: "query",
              description: "Part of a task id, or exactly an idempotency key, a sandbox id (an event's environment_id) or a host (an event's attrs.host, any case)",
              schema: { type: "string" },
            },
            { name: "phase", in: "query", schema: { type: "string" } },
            { name: "status", in: "query", description: "Tasks with a side effect in this status", schema: { type: "string" } },
          ],
          responses: { ...ok("`{tasks: [...], next_cursor}`"), ...errors(400, 401) },
        },
      },
      "/api/v1/tasks/{task_id}": {
        get: { summary: "Latest record, signature check, side-effect view, the runtime's gate asks per attempt", parameters: [taskId], responses: { ...ok("Task view"), ...errors(401, 404) } },
        put: {
          summary: "Checkpoint the task record (new signed version)",
          parameters: [taskId],
          requestBody: { required: true, ...json("TaskRecord") },
          responses: { ...ok("`{task_id, version, digest, signature}`"), ...errors(400, 401, 403, 409, 413, 422) },
        },
      },
      "/api/v1/tasks/{task_id}/timeline": {
        get: {
          summary: "Events ordered by occurred_at, id (keyset pagination)",
          parameters: [taskId, { name: "cursor", in: "query", schema: { type: "string" } }, { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 1000 } }],
          responses: { ...ok("`{events, next_cursor}`"), ...errors(400, 401, 404) },
        },
      },
      "/api/v1/tasks/{task_id}/checkpoints": { get: { summary: "Checkpoint history", parameters: [taskId], responses: { ...ok("`{checkpoints}`"), ...errors(401, 404) } } },
      "/api/v1/tasks/{task_id}/artifacts": { get: { summary: "Artifacts with sha256", parameters: [taskId], responses: { ...ok("`{artifacts}`"), ...errors(401, 404) } } },
      "/api/v1/tasks/{task_id}/side-effects/{name}/intent": {
        post: {
          summary: "Register an intent: go, replay (header Idempotent-Replayed: true) or a refusal",
          parameters: [taskId, effect],
          requestBody: { required: true, ...json("Intent") },
          responses: { ...ok("`{decision: go, lease_expires_at}` or `{decision: replay, receipt}`"), ...errors(400, 401, 403, 404, 409, 422) },
        },
      },
      "/api/v1/tasks/{task_id}/side-effects/{name}/receipt": {
        post: {
          summary: "Record the receipt of a completed write (an identical repeat is a no-op)",
          parameters: [taskId, effect],
          requestBody: { required: true, ...json("Receipt") },
          responses: { ...ok("`{status: completed, receipt, replayed}`"), ...errors(400, 401, 404, 409, 422) },
        },
      },
      "/api/v1/tasks/{task_id}/side-effects/{name}/reconcile": {
        post: {
          summary: "A person settles an unknown effect (runtime keys get 403)",
          parameters: [taskId, effect],
          requestBody: { required: true, ...json("Reconcile") },
          responses: { ...ok("`{name, status, reconcile, audit_seq}`"), ...errors(401, 403, 404, 409, 422) },
        },
      },
      "/api/v1/tasks/{task_id}/side-effects/{name}/lookup": {
        post: { summary: "Ask the tool owner's lookup endpoint (evidence only)", parameters: [taskId, effect], responses: { ...ok("Lookup answer"), ...errors(401, 403, 404) } },
      },
      "/api/v1/tasks/{task_id}/resume": {
        post: {
          summary: "Resume gate verdict",
          parameters: [taskId],
          requestBody: { required: false, ...json("ResumeRequest") },
          responses: { ...ok("`{verdict, reasons, next_phase, permitted_side_effects}`"), ...errors(401, 404, 422) },
        },
      },
      "/api/v1/signing-keys": { get: { summary: "Ed25519 public keys (JWK Set) that verify checkpoints", security: [], responses: ok("`{keys}`") } },
      "/api/v1/settings/api-keys": {
        get: { summary: "Runtime API keys of the tenant (never the key; signed-in)", responses: { ...ok("`{keys}`"), ...errors(401, 403) } },
        post: {
          summary: "Create a runtime API key, shown once (owners, admins; signed-in). Typed text: no control or bidi override characters",
          requestBody: { required: true, ...json("CreateApiKey") },
          responses: { ...ok("`{id, name, key}`"), ...errors(400, 401, 403, 422) },
        },
      },
      "/api/v1/settings/principals/revoke": {
        post: {
          summary: "Revoke a principal; its tasks stop at the resume gate (owners, admins; signed-in)",
          requestBody: { required: true, ...json("RevokePrincipal") },
          responses: { ...ok("`{revoked: true}`"), ...errors(400, 401, 403, 409, 422) },
        },
      },
      "/api/v1/settings/principals/restore": {
        post: {
          summary: "Restore a revoked principal (owners, admins; signed-in)",
          requestBody: { required: true, ...json("RestorePrincipal") },
          responses: { ...ok("`{restored: true}`"), ...errors(400, 401, 403, 404, 422) },
        },
      },
      "/api/v1/settings/members": {
        get: { summary: "Members with roles and sign-in lock `{failures, locked_until}` (signed-in)", responses: { ...ok("`{members}`"), ...errors(401, 403) } },
      },
      "/api/v1/settings/members/{user_id}/unlock": {
        post: {
          summary: "Forget a locked-out member's failed sign-ins so the right password works again (owners, admins; signed-in; audited)",
          parameters: [{ name: "user_id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
          responses: { ...ok("`{unlocked: true, user_id, email, failures, audit_seq}`"), ...errors(401, 403, 404, 409) },
        },
      },
      "/api/v1/settings/lookups/{tool}": {
        put: {
          summary: "Register a tool's lookup endpoint (owners, admins; signed-in)",
          parameters: [{ name: "tool", in: "path", required: true, schema: { type: "string" } }],
          requestBody: { required: true, ...json("Lookup") },
          responses: { ...ok("The lookup"), ...errors(401, 403, 422) },
        },
      },
    },
  };
}
