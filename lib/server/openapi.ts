/**
 * The OpenAPI 3.1 description of the runtime API v1, with request bodies generated from the same zod schemas
 * the routes validate with (docs/api.md#openapi-document).
 */
import { AUDIT_ACTIONS } from "@/lib/domain/audit/actions";
import { z } from "zod";
import { eventInputSchema } from "@/lib/domain/events/schema";
import { resumeBodySchema } from "@/lib/domain/gate/ask";
import { lookupBodySchema } from "@/lib/domain/settings/lookups";
import { endpointBodySchema, notificationSettingsSchema } from "@/lib/domain/notifications/endpoints";
import { outcomeReportSchema } from "@/lib/domain/webhooks/receive";
import { sourceBodySchema, trustBodySchema } from "@/lib/domain/webhooks/sources";
import { restorePrincipalBodySchema, revokePrincipalBodySchema } from "@/lib/domain/settings/principals";
import { changePasswordBodySchema, switchWorkspaceBodySchema } from "@/lib/domain/tenancy/account";
import { createApiKeyBodySchema } from "@/lib/domain/tenancy/api-keys";
import { completeExerciseSchema, createExerciseSchema, updateExerciseSchema } from "@/lib/domain/exercises/rules";
import { createMapSchema, layerPatchSchema, layerRowSchema, mapImportSchema } from "@/lib/domain/maps/rules";
import { acceptBodySchema, inviteBodySchema } from "@/lib/domain/tenancy/invitations";
import { changeRoleBodySchema } from "@/lib/domain/tenancy/members";
import { intentBodySchema } from "@/lib/domain/side-effects/intent";
import { notAppliedReceiptBodySchema, receiptBodySchema } from "@/lib/domain/side-effects/receipt";
import { reconcileBodySchema } from "@/lib/domain/side-effects/reconcile";
import { MAP_LAYERS } from "@/lib/domain/maps/layers";
import { DEFAULT_PAGE, MAX_PAGE } from "@/lib/domain/tasks/read";
import { TASK_SORTS } from "@/lib/domain/tasks/list";
import { TASK_STATUSES } from "@/lib/domain/tasks/status";
import { taskRecordSchema } from "@/lib/domain/tasks/record";
import { decisionBodySchema } from "@/lib/domain/approvals/decide";
import { policyDocumentSchema } from "@/lib/domain/policies/document";
import { actionRuleBodySchema, approvalSettingsBodySchema } from "@/lib/domain/approvals/settings";
import { retentionSettingsBodySchema } from "@/lib/domain/settings/retention";
import { deleteTaskBodySchema } from "@/lib/domain/tasks/delete";

const schema = (s: z.ZodType) => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest;
};

const json = (ref: string) => ({
  content: { "application/json": { schema: { $ref: `#/components/schemas/${ref}` } } },
});
/** `Retry-After` of a 503: whole seconds to wait before sending the request again. */
const retryAfter = {
  "Retry-After": { description: "Seconds to wait before sending again", schema: { type: "integer", minimum: 1 } },
};
/** The listed error statuses, and 503 (the database cannot be reached), which every route can answer. */
const errors = (...codes: number[]) =>
  Object.fromEntries(
    [...codes, 503].map((c) => [
      String(c),
      { description: ERROR_TEXT[c] ?? "Error", ...(c === 503 ? { headers: retryAfter } : {}), ...json("Error") },
    ]),
  );
const ERROR_TEXT: Record<number, string> = {
  400: "Malformed request (not JSON, bad key, bad cursor, limit out of range)",
  401: "No or invalid credentials",
  403: "Not allowed for this caller",
  404: "Unknown task, effect, map or exercise (also another tenant's)",
  409: "Conflict with the current state",
  410: "`task_deleted`: the task was deleted (decision 0054); nothing is read or written for its id again",
  413: "Body over 1 MB or more than 1000 events",
  415: "Another content type than the route reads",
  422: "Validation failed; the message names the field",
  503: "`database_unavailable`: the database cannot be reached; nothing half-done was kept, send again after `Retry-After`",
};
const taskId = {
  name: "task_id",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$" },
};
const effect = { name: "name", in: "path", required: true, schema: { type: "string" } };
const sha256Param = {
  name: "sha256",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^[a-f0-9]{64}$" },
};
const PARAM_SOURCE = { name: "source", in: "path", required: true, schema: { type: "string" } } as const;

/** A JSON request body described in words (no component schema of its own). */
const object = (description: string) => ({
  content: { "application/json": { schema: { type: "object", description } } },
});
const ok = (description: string, ref?: string) => ({ "200": { description, ...(ref ? json(ref) : {}) } });
const mapId = { name: "map_id", in: "path", required: true, schema: { type: "string", format: "uuid" } };
/** The `{layer}` path parameter: one of the eight layers of a custody map. */
const layerParam = { name: "layer", in: "path", required: true, schema: { type: "string", enum: [...MAP_LAYERS] } };
const exerciseId = { name: "exercise_id", in: "path", required: true, schema: { type: "string", format: "uuid" } };
const policyVersion = {
  name: "version",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^(?:[Pp][Oo][Ll][Ii][Cc][Yy]-)?[Vv]?[0-9]{1,9}$" },
  description: "A policy version (1, 2, 3 … per tenant), written 3, v3 or policy-v3 (decision 0047)",
};
/** A policy document, as JSON or as YAML text. */
const policyBody = {
  required: true,
  content: {
    "application/json": { schema: { $ref: "#/components/schemas/PolicyDocument" } },
    "application/yaml": { schema: { type: "string" } },
  },
};
/** Custody maps are for people: a signed-in session (runtime keys get 403). */
const session = [{ session: [] }];

/** The audit log (decision 0048): a session of any role, or a full or read-only key. */
const auditReaders = [{ runtimeKey: [] }, { session: [] }];
/** The audit log's filters (lib/domain/audit/read.ts `parseAuditQuery`); an unknown or malformed one is a 400. */
const auditFilters = [
  {
    name: "actor",
    in: "query",
    description: "A person's user id or email, or a key's id or `key:<name>`, as the entry stored it",
    schema: { type: "string", maxLength: 320 },
  },
  {
    name: "action",
    in: "query",
    description: "One audit action; entries stored under its earlier name (decision 0023) match too",
    schema: { type: "string", enum: [...AUDIT_ACTIONS] },
  },
  {
    name: "from",
    in: "query",
    description: "ISO 8601 date (from 00:00 UTC) or date-time with a zone: entries at or after it",
    schema: { type: "string" },
  },
  {
    name: "to",
    in: "query",
    description: "ISO 8601 date (through the end of that UTC day) or date-time with a zone; not before from",
    schema: { type: "string" },
  },
  {
    name: "task",
    in: "query",
    description: "A task id: the task's entries and its side effects', credentials' and approvals'",
    schema: { type: "string", maxLength: 512 },
  },
  {
    name: "target",
    in: "query",
    description: "One target exactly as stored",
    schema: { type: "string", maxLength: 1024 },
  },
];

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
      securitySchemes: {
        runtimeKey: { type: "http", scheme: "bearer" },
        session: {
          type: "apiKey",
          in: "cookie",
          name: "next-auth.session-token",
          description: "A signed-in person's session (the dashboard)",
        },
      },
      schemas: {
        Error: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["code", "message"],
              properties: { code: { type: "string" }, message: { type: "string" }, details: {} },
            },
          },
        },
        Event: schema(eventInputSchema),
        EventBatch: {
          type: "object",
          required: ["events"],
          properties: { events: { type: "array", maxItems: 1000, items: { $ref: "#/components/schemas/Event" } } },
        },
        TaskRecord: schema(taskRecordSchema),
        Intent: schema(intentBodySchema),
        Receipt: { oneOf: [schema(receiptBodySchema), schema(notAppliedReceiptBodySchema)] },
        Reconcile: schema(reconcileBodySchema),
        ResumeRequest: schema(resumeBodySchema),
        Lookup: schema(lookupBodySchema),
        WebhookSource: schema(sourceBodySchema),
        WebhookTrust: schema(trustBodySchema),
        OutcomeReport: schema(outcomeReportSchema),
        NotificationEndpoint: schema(endpointBodySchema),
        NotificationSettings: schema(notificationSettingsSchema),
        CreateApiKey: schema(createApiKeyBodySchema),
        RevokePrincipal: schema(revokePrincipalBodySchema),
        RestorePrincipal: schema(restorePrincipalBodySchema),
        CreateMap: schema(createMapSchema),
        LayerRow: schema(layerRowSchema),
        LayerPatch: schema(layerPatchSchema),
        MapImport: schema(mapImportSchema),
        CreateExercise: schema(createExerciseSchema),
        UpdateExercise: schema(updateExerciseSchema),
        CompleteExercise: schema(completeExerciseSchema),
        Invite: schema(inviteBodySchema),
        ChangeRole: schema(changeRoleBodySchema),
        AcceptInvitation: schema(acceptBodySchema),
        SwitchWorkspace: schema(switchWorkspaceBodySchema),
        ChangePassword: schema(changePasswordBodySchema),
        Decision: schema(decisionBodySchema),
        PolicyDocument: schema(policyDocumentSchema),
        ApprovalSettings: schema(approvalSettingsBodySchema),
        ApprovalRule: schema(actionRuleBodySchema),
        RetentionSettings: schema(retentionSettingsBodySchema),
        DeleteTask: schema(deleteTaskBodySchema),
      },
    },
    security: [{ runtimeKey: [] }],
    paths: {
      "/api/health": {
        get: {
          summary: "Liveness once migrations are applied",
          security: [],
          responses: {
            ...ok("`{ok: true}`"),
            "503": {
              description:
                "`{ok: false, error: {code, message}}`: `database_unavailable` (with `Retry-After`) while the database cannot be reached, `unavailable` when it is not ready (a failed migration)",
              headers: retryAfter,
            },
          },
        },
      },
      "/api/v1/events": {
        post: {
          summary: "Report a batch of events (≤ 1000, ≤ 1 MB); idempotent by event id",
          description:
            "Side-effect events move custody under the intent and receipt routes' rules: a `side_effect.intent` the route would refuse (stale attempt, stop, missing or used approval, `duplicate_payload` — another effect of the task with the same action and payload digest in flight, completed or unknown, unless attrs.repeats names it) makes the effect unknown; attrs.payload, when sent, must have the digest attrs.payload_digest (else the event is rejected). A `side_effect.receipt` names its external_operation_id, or says `outcome: \"not_applied\"` with the tool's `error`, which settles an in-flight write as not applied. A `tool.failed` naming an idempotency key settles nothing: a failure is not evidence that nothing was applied. An event naming an attempt more than 10 ahead of its task's current attempt is rejected (attempt_too_far_ahead, path `attempt`). The gate reads events in the order the server received them (within a batch, the batch's order), never by occurred_at.",
          requestBody: { required: true, ...json("EventBatch") },
          responses: {
            ...ok(
              "`{results: [{id, status: stored|duplicate|conflict|rejected, error?: {code, message, path?}, stored_digest?, effect?: {name, applied, code?, message?}}]}` — `rejected`: refused with the path of the field at fault (`attrs.call_id`; ids, names, hosts and references have limits, the README's limits), the rest of the batch is stored; `duplicate`: the same id and content was received before; `conflict`: the same id with other content (nothing stored; `stored_digest` = sha256 of the stored event's RFC 8785 JSON); `effect`: whether a side-effect move was applied, and why not",
            ),
            ...errors(400, 401, 403, 413, 415, 422),
          },
        },
      },
      "/api/v1/traces": {
        post: {
          summary: "OTLP/HTTP trace export (ExportTraceServiceRequest): spans stored as runtime events (decision 0039)",
          description:
            "The path an OTLP exporter appends to the endpoint `https://<host>/api`. Body `application/x-protobuf` or `application/json`, optionally `Content-Encoding: gzip`, at most 4 MiB (compressed and decompressed). GenAI semantic-convention spans (also OpenInference, the Vercel AI SDK, OpenLLMetry) map onto the four planes: invoke_agent → run start and end (an error ends it as run.interrupted), execute_tool → tool.called and tool.completed / tool.failed paired by gen_ai.tool.call.id, chat and other inference spans → x.model.called with a tool.called for each tool call in their output, anything else → x.otel.span. Task id: gen_ai.conversation.id (or session.id), else custody.task_id on the span or its resource, else the trace id; attempt: custody.attempt. The span id is the dedupe key. Failures answer with a google.rpc.Status body `{code, message}` in the request's encoding.",
          requestBody: {
            required: true,
            content: {
              "application/x-protobuf": { schema: { type: "string", format: "binary" } },
              "application/json": { schema: { type: "object", properties: { resourceSpans: { type: "array" } } } },
            },
          },
          responses: {
            ...ok(
              "ExportTraceServiceResponse in the request's encoding: `{}` when every span was stored (or had been), else `{partialSuccess: {rejectedSpans, errorMessage}}` naming each rejected span (bad trace or span id, times not integers, an event the events path refuses) and why",
            ),
            ...errors(400, 401, 403, 413, 415),
          },
        },
      },
      "/api/v1/traces/ingest": {
        post: {
          summary:
            "The OpenAI Agents SDK's trace export {data: [trace | span, …]}: stored as runtime events (decision 0039)",
          description:
            "Point the SDK's exporter (`OpenAITracingExporter` in JavaScript, `BackendSpanExporter` in Python) here with a runtime key as its API key. Traces name the task (group_id, else metadata.task_id, else the trace id); spans map by span_data.type: agent → run start and end, function → tool.called and its outcome, generation / response → x.model.called, handoff, guardrail, mcp_tools, custom and unknown types kept as x. events. A resent item stores nothing twice.",
          requestBody: {
            required: true,
            content: { "application/json": { schema: { type: "object", properties: { data: { type: "array" } } } } },
          },
          responses: {
            ...ok(
              "`{accepted, rejected: [{index, error: {code: invalid_item, message}}]}`: an item that is neither a trace nor a span, lacks its id, or makes an event the events path refuses is rejected by its position; the rest is stored",
            ),
            ...errors(400, 401, 403, 413, 415, 422),
          },
        },
      },
      "/api/v1/tasks": {
        get: {
          summary:
            "Tasks with their status, most recent activity first (sort=created: newest first; keyset pagination: pass next_cursor back as cursor with the same sort)",
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
              description:
                "Part of a task id, or exactly an idempotency key, a sandbox id (an event's environment_id) or a host (an event's attrs.host, any case)",
              schema: { type: "string" },
            },
            { name: "phase", in: "query", schema: { type: "string" } },
            {
              name: "status",
              in: "query",
              description:
                "The task's status (decision 0043): from the phase once the run has ended, else from the resume gate",
              schema: { type: "string", enum: [...TASK_STATUSES] },
            },
            {
              name: "effect_status",
              in: "query",
              description: "Tasks with a side effect in this status",
              schema: { type: "string" },
            },
            { name: "sort", in: "query", schema: { type: "string", enum: [...TASK_SORTS], default: "activity" } },
            { name: "host", in: "query", schema: { type: "string" } },
            { name: "credential_ref", in: "query", schema: { type: "string" } },
            {
              name: "policy_version",
              in: "query",
              description:
                "Checkpointed under this policy version: `1`, `v1` and `policy-v1` alike; another runtime string exactly",
              schema: { type: "string" },
            },
            {
              name: "workflow",
              in: "query",
              description:
                "The task's workflow exactly: `attrs.workflow` of its first `task.created` event naming one (decision 0049); each task carries it as `workflow` (null when none)",
              schema: { type: "string", maxLength: 200 },
            },
          ],
          responses: { ...ok("`{tasks: [...], next_cursor}`"), ...errors(400, 401) },
        },
      },
      "/api/v1/tasks/{task_id}": {
        get: {
          summary:
            "Latest record with its signature and key id, signature check, side-effect view, the runtime's gate asks per attempt (ETag: the version)",
          parameters: [taskId],
          responses: { ...ok("Task view"), ...errors(401, 404, 410) },
        },
        put: {
          summary:
            'Checkpoint the task record (new signed version). The record names its `attempt`: an older attempt than the task\'s current one gets 409 stale_attempt, one more than 10 ahead of it 422 attempt_too_far_ahead (details {attempt, current_attempt, max_attempt}). A record may name its `snapshot` {digest, snapshot_id?}: a restore after it must bring back that one (gate reason snapshot_stale). Send the version it is based on as `If-Match: "n"` or `base_version` to get 409 version_conflict instead of overwriting a newer one.',
          parameters: [
            taskId,
            {
              name: "If-Match",
              in: "header",
              required: false,
              schema: { type: "string" },
              description: 'The version this checkpoint is based on, e.g. "3"',
            },
          ],
          requestBody: { required: true, ...json("TaskRecord") },
          responses: {
            ...ok("`{task_id, version, digest, signature, key_id, attempt}`"),
            ...errors(400, 401, 403, 409, 410, 413, 422),
          },
        },
        delete: {
          summary:
            "Delete the task (decision 0054): body `{reason}` (3–1000 characters); owners and admins; audited task.deleted with counts per kind and digests. Its events, checkpoints, side effects, artifacts (bytes no other task shares) and approvals go in one transaction; the task row stays as a tombstone and every path for the id then answers 410 task_deleted (an event for it is rejected with code task_deleted). 409 conflict when already deleted; 409 export_required when the workspace requires an export taken after the task's last change",
          security: session,
          parameters: [taskId],
          requestBody: { required: true, ...json("DeleteTask") },
          responses: {
            ...ok(
              "`{task_id, deleted_at, deleted_by, reason, summary: {counts, latest_checkpoint, artifacts, artifacts_truncated, last_change}}`",
            ),
            ...errors(400, 401, 403, 404, 409, 422),
          },
        },
      },
      "/api/v1/tasks/{task_id}/timeline": {
        get: {
          summary:
            "Events two ways. Time order (occurred_at, id; keyset: pass next_cursor back as cursor), optionally only the window from..to (inclusive ISO 8601 times): `{events, next_cursor}`. Arrival order with `since` (0 from the start, then next_since): `{events, next_since, has_more}` in the server's commit-safe receive order, so an incremental reader never misses an event that arrives late with an earlier occurred_at. since cannot be combined with cursor, from or to.",
          parameters: [
            taskId,
            { name: "cursor", in: "query", schema: { type: "string" } },
            { name: "from", in: "query", schema: { type: "string", format: "date-time" } },
            { name: "to", in: "query", schema: { type: "string", format: "date-time" } },
            {
              name: "since",
              in: "query",
              schema: { type: "string" },
              description: "Arrival-feed cursor: 0, a next_since, or an overview's since",
            },
            { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 1000, default: 200 } },
            {
              name: "attrs",
              in: "query",
              schema: { type: "string", enum: ["full", "summary"], default: "full" },
              description:
                "summary: events whose attrs serialize past 1,024 characters carry their top-level scalar values, strings cut to 200, and attrs_truncated: true (what the task page asks for)",
            },
          ],
          responses: {
            ...ok("`{events, next_cursor}` or, with since, `{events, next_since, has_more}`"),
            ...errors(400, 401, 404),
          },
        },
      },
      "/api/v1/tasks/{task_id}/timeline/overview": {
        get: {
          summary:
            "What a timeline shows first: every event of a task of up to 2,000 (complete: true); for a longer one every marker event (interruptions, restarts, resumes, stops, sandbox lifecycle), the 250 newest events (all from newest_from on) and per-lane bins counted on the server; since is an arrival-feed cursor for what arrives next.",
          parameters: [
            taskId,
            {
              name: "attrs",
              in: "query",
              schema: { type: "string", enum: ["full", "summary"], default: "full" },
              description:
                "summary: events whose attrs serialize past 1,024 characters carry their top-level scalar values, strings cut to 200, and attrs_truncated: true (what the task page asks for)",
            },
          ],
          responses: {
            ...ok(
              "`{total, counts, range, complete, events, newest_from, bins: [{plane, first, last, count, failed, denied}], since, compaction_unchecked: {event_id, occurred_at} | null}`",
            ),
            ...errors(401, 404),
          },
        },
      },
      "/api/v1/tasks/{task_id}/events/{event_id}": {
        get: {
          summary:
            "One event of the task, its attrs capped at 16,384 serialized characters with strings cut to 4,096 (attrs_truncated: true when cut): what the timeline fetches when a page carried only a summary.",
          parameters: [
            taskId,
            { name: "event_id", in: "path", required: true, schema: { type: "string", maxLength: 200 } },
          ],
          responses: {
            ...ok("StoredEvent"),
            ...errors(400, 401, 404),
          },
        },
      },
      "/api/v1/tasks/{task_id}/checkpoints": {
        get: {
          summary:
            "Checkpoint history, newest first, each with signature and key id (keyset pagination: pass next_cursor back as cursor)",
          parameters: [
            taskId,
            { name: "cursor", in: "query", schema: { type: "string" } },
            { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 200, default: 50 } },
          ],
          responses: {
            ...ok(
              "`{checkpoints: [{version, digest, signature, key_id, attempt, signature_valid, phase, created_at, record}], next_cursor}`",
            ),
            ...errors(400, 401, 404),
          },
        },
      },
      "/api/v1/tasks/{task_id}/export": {
        get: {
          summary:
            "The task's evidence bundle, streamed as application/gzip (tar.gz): checkpoints, events, side effects, receipts, approvals, gate asks, audit entries with chain links and head, artifact manifest, linked custody map versions and exercises, keys, portability inventory, and a DSSE/in-toto attestation over every file (decision 0037; check with `npx run-custody verify`)",
          parameters: [taskId],
          responses: {
            "200": { description: "The bundle (`application/gzip`, attachment)" },
            ...errors(400, 401, 403, 404),
          },
        },
      },
      "/api/v1/tasks/{task_id}/artifacts": {
        get: {
          summary:
            "Artifacts with sha256, and whether their bytes were uploaded and still hash to it (content: stored, missing, mismatch)",
          parameters: [taskId],
          responses: { ...ok("`{artifacts}`"), ...errors(401, 404) },
        },
      },
      "/api/v1/tasks/{task_id}/artifacts/{sha256}": {
        get: {
          summary:
            "One listed artifact with a preview of its uploaded bytes (Markdown, JSON pretty-printed, text; at most 64 Ki characters)",
          parameters: [taskId, sha256Param],
          responses: {
            ...ok("`{ref, sha256, media_type, size, content, kind, text, truncated, download_url}`"),
            ...errors(401, 404, 422),
          },
        },
      },
      "/api/v1/tasks/{task_id}/artifacts/{sha256}/content": {
        get: {
          summary:
            "The artifact's bytes as an attachment (listed media type, X-Content-Type-Options: nosniff); 409 artifact_content_mismatch when the stored bytes no longer hash to the digest",
          parameters: [taskId, sha256Param],
          responses: { "200": { description: "The bytes" }, ...errors(401, 404, 409, 422) },
        },
        put: {
          summary:
            "Upload the artifact's bytes (runtime keys): 201 stored, 200 the same bytes were already stored; 422 content_digest_mismatch when they hash to another digest; 413 over CUSTODY_ARTIFACT_MAX_BYTES (default 10 MiB)",
          parameters: [taskId, sha256Param],
          requestBody: {
            required: true,
            content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
          },
          responses: {
            ...ok("`{sha256, size, created}`"),
            "201": { description: "`{sha256, size, created: true}`" },
            ...errors(401, 403, 404, 413, 422),
          },
        },
      },
      "/api/v1/tasks/{task_id}/credentials": {
        get: {
          summary:
            "The credentials the task's runs held, from vault-lane events (metadata only, never a value), with the last revocation check of each, and the vault-lane events that carried a credential value or placeholder (redacted before storage, newest 50)",
          parameters: [taskId],
          responses: {
            ...ok(
              "`{credentials: [{credential_ref, last_issued_at, last_used_at, used, uses: [{event_id, occurred_at, tool, host, purpose, attempt}] (newest 20; `used` counts them all), last_revoked_at, last_expired_at, scope, expires_at, can_check, last_check}], flagged_events: [{event_id, type, credential_ref, occurred_at, kinds}]}`",
            ),
            ...errors(401, 404),
          },
        },
      },
      "/api/v1/tasks/{task_id}/credentials/{ref}/revocation-check": {
        post: {
          summary:
            "Ask the credential's revocation_url (current policy) whether it is revoked; the answer is kept as a credential.revocation_checked event on the vault lane, with an audit entry (no body; responders, owners, admins). 422 when the current policy names no revocation endpoint",
          security: session,
          parameters: [taskId, { name: "ref", in: "path", required: true, schema: { type: "string" } }],
          responses: {
            ...ok(
              "`{credential_ref, outcome: revoked|not_revoked|ambiguous|timeout|unreachable|refused, revoked, revoked_at, http_status, checked_at, event_id, policy_version, message}`",
            ),
            ...errors(400, 401, 403, 404, 422),
          },
        },
      },
      "/api/v1/tasks/{task_id}/terminate": {
        post: {
          summary:
            "End the task for good (decision 0043): body `{reason}`; owners, responders and admins; audited task.terminated. The phase becomes terminated, the gate answers stop (task_terminated), intents are refused and checkpoints answer 409 task_terminated; events and receipts are still recorded. 409 conflict when already ended",
          security: session,
          parameters: [taskId],
          responses: {
            ...ok("`{task_id, previous_phase, terminated_at, terminated_by, reason}`"),
            ...errors(400, 401, 403, 404, 409, 422),
          },
        },
      },
      "/api/v1/tasks/{task_id}/events": {
        get: {
          summary:
            "The task's events as one JSON document, streamed, in time order (decision 0043): `{task_id, order, events, count, complete, next_cursor}`; at most max events, next_cursor (the timeline's cursor) continues",
          parameters: [
            taskId,
            { name: "cursor", in: "query", schema: { type: "string" } },
            { name: "max", in: "query", schema: { type: "integer", minimum: 1, maximum: 100000, default: 100000 } },
          ],
          responses: { ...ok("the JSON document, as an attachment"), ...errors(400, 401, 404) },
        },
      },
      "/api/v1/tasks/{task_id}/fence": {
        post: {
          summary:
            "Fence the task to a new attempt (current attempt + 1; decision 0032): every older attempt ends (its in-flight writes become unknown, listed in `ended`) and only the new attempt may checkpoint or write. Body `{reason?}` or none; owners, responders and admins; audited task.fenced. 409 conflict at the highest attempt",
          security: session,
          parameters: [taskId],
          responses: {
            ...ok("`{task_id, previous_attempt, current_attempt, ended}`"),
            ...errors(400, 401, 403, 404, 409, 422),
          },
        },
      },
      "/api/v1/tasks/{task_id}/egress": {
        get: {
          summary:
            "Per host the task's runs asked to reach (egress.allowed / egress.denied events), and whether the current policy still admits it",
          parameters: [taskId],
          responses: {
            ...ok(
              "`{current_policy_version, hosts: [{host, allowed, denied, requests: [{event_id, occurred_at, outcome, method, path, tool, credential_ref, attempt}] (newest 20; `allowed` + `denied` count them all), last_at, ports, policy_versions, tools, credential_refs, in_current_policy, drift}]}`",
            ),
            ...errors(401, 404),
          },
        },
      },
      "/api/v1/tasks/{task_id}/side-effects/{name}/intent": {
        post: {
          summary:
            "Register an intent: go, replay (header Idempotent-Replayed: true) or a refusal. A mutation the resume gate would not permit is refused with 409 gate_stop / gate_replay and the gate's reasons in details.reasons; an older attempt gets 409 stale_attempt, one more than 10 ahead of the current one 422 attempt_too_far_ahead; a revoked principal 403 for every intent. A write that needs approval (requires_approval, or the tenant marks the action) answers 403 approval_required {approval_id} until a fresh approval exists (same key and digest, same request); another digest under an approval answers 403 approval_mismatch; a rejected one 403 approval_rejected. A fresh approval authorizes one go: a retry after the write was found not applied needs a fresh one (403 approval_required with a new request that supersedes the used one) unless Settings → Approvals lets it reuse the approval. A mutation whose action and payload digest equal those of another effect of the task that is in flight, completed or unknown answers 409 duplicate_payload (details {side_effect, idempotency_key, status, receipt? (completed: replay it), same_writes}); a deliberate identical write names the latest of them in `repeats` (recorded, on the timeline, and under the same approval rules as the write it repeats), else 422 repeats_mismatch. A `payload` must have the digest `payload_digest` (sha256 hex of the RFC 8785 JSON of {tool, arguments: payload}, tool defaulting to the effect name; a `sha256:` prefix and case are ignored), else 422 payload_digest_mismatch (details {payload_digest, computed_payload_digest}). A new approval request on a task that already holds 100 pending ones answers 409 too_many_pending_approvals (details {limit, value}).",
          parameters: [taskId, effect],
          requestBody: { required: true, ...json("Intent") },
          responses: {
            ...ok("`{decision: go, lease_expires_at}` or `{decision: replay, receipt}`"),
            ...errors(400, 401, 403, 404, 409, 422),
          },
        },
      },
      "/api/v1/tasks/{task_id}/side-effects/{name}/receipt": {
        post: {
          summary:
            'Record the receipt of a write. A completed one (`outcome` absent or "applied"; an identical repeat is a no-op), or `{outcome: "not_applied", error}`: the tool owner says nothing of the write was applied — an in-flight write returns to where a retry starts (not_started, or approved when the workspace lets a retry reuse the approval) and the same key gets a fresh go; `error` is kept with credentials redacted, at most 1000 characters (warnings: ["error_truncated"]). One that is not applied (effect unknown, older attempt, no intent yet, conflicting, already settled) answers 409 and is kept as evidence for whoever reconciles.',
          parameters: [taskId, effect],
          requestBody: { required: true, ...json("Receipt") },
          responses: {
            ...ok(
              "`{status: completed, receipt, replayed, warnings}`, or for not_applied `{status: not_started|approved, outcome: not_applied, error, replayed, warnings}`",
            ),
            ...errors(400, 401, 404, 409, 422),
          },
        },
      },
      "/api/v1/import/openai-agents/run-state": {
        post: {
          summary:
            "Import a serialized RunState of the OpenAI Agents SDK (JavaScript camelCase or Python snake_case; a JSON object or a JSON string): pending tool approvals become approval requests (nested agent-as-tool runs included, attributed to the agent that raised them; hosted/MCP requests keep their provider request id), executed tool outputs become receipts, calls with no output in a state that ended mid-turn become unknown effects. $schemaVersion is read per SDK. Importing the same state again creates nothing new. Runtime keys and signed-in responders, owners, admins.",
          security: [{ runtimeKey: [] }, { session: [] }],
          parameters: [
            {
              name: "task_id",
              in: "query",
              required: true,
              schema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$" },
            },
            {
              name: "agent_version",
              in: "query",
              schema: { type: "string", maxLength: 200 },
              description: "The agent's version, bound into the approval requests.",
            },
          ],
          requestBody: {
            required: true,
            content: { "application/json": { schema: { oneOf: [{ type: "object" }, { type: "string" }] } } },
          },
          responses: {
            ...ok(
              "`{task_id, sdk: openai-agents-js|openai-agents-python, schema_version, approvals: [approval ids], receipts: [effect names], unknown: [effect names], warnings: [...]}`",
            ),
            ...errors(400, 401, 403, 404, 413, 422),
          },
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
      "/api/v1/tasks/{task_id}/tool-definitions/{tool}/accept": {
        post: {
          summary:
            "A person accepts a tool's changed definition (the latest digest the server received); ends tool_definition_changed (runtime keys get 403)",
          parameters: [taskId, { name: "tool", in: "path", required: true, schema: { type: "string" } }],
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["definition_digest"],
                  properties: { definition_digest: { type: "string", pattern: "^[a-f0-9]{64}$" } },
                  additionalProperties: false,
                },
              },
            },
          },
          responses: {
            ...ok("`{task_id, tool, definition_digest, previous_digest, accepted_by}`"),
            ...errors(401, 403, 404, 409, 422),
          },
        },
      },
      "/api/v1/tasks/{task_id}/side-effects/{name}/lookup": {
        post: {
          summary: "Ask the tool owner's lookup endpoint (evidence only)",
          parameters: [taskId, effect],
          responses: { ...ok("Lookup answer"), ...errors(401, 403, 404) },
        },
      },
      "/api/v1/tasks/{task_id}/resume": {
        post: {
          summary: "Resume gate verdict",
          parameters: [taskId],
          requestBody: { required: false, ...json("ResumeRequest") },
          responses: { ...ok("`{verdict, reasons, next_phase, permitted_side_effects}`"), ...errors(401, 404, 422) },
        },
      },
      "/api/v1/signing-keys": {
        get: {
          summary: "Ed25519 public keys (JWK Set) that verify checkpoints",
          security: [],
          responses: ok("`{keys}`"),
        },
      },
      "/api/v1/settings/api-keys": {
        get: {
          summary: "Runtime API keys of the tenant (never the key; signed-in)",
          responses: { ...ok("`{keys}`"), ...errors(401, 403) },
        },
        post: {
          summary:
            "Create a runtime API key, shown once (owners, admins; signed-in), with an optional scope (full | runtime | read_only | task_prefix with task_prefix) and expires_at (future, at most 366 days ahead; null = never). A key outside its scope gets 403 scope_runtime_only / scope_read_only / scope_task_prefix, a task outside its prefix 404, an expired key 401 api_key_expired (decision 0044). Typed text: no control or bidi override characters",
          requestBody: { required: true, ...json("CreateApiKey") },
          responses: { ...ok("`{id, name, key, scope, task_prefix, expires_at}`"), ...errors(400, 401, 403, 422) },
        },
      },
      "/api/v1/settings/api-keys/{key_id}/revoke": {
        post: {
          summary: "Revoke a runtime API key (no body; owners, admins; signed-in). 409 when already revoked",
          security: session,
          parameters: [{ name: "key_id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
          responses: { ...ok("`{revoked: true}`"), ...errors(400, 401, 403, 404, 409, 422) },
        },
      },
      "/api/v1/settings/principals": {
        get: {
          summary: "Principals that ran tasks, with their task count and whether they are revoked (signed-in)",
          security: session,
          responses: { ...ok("`{principals: [{principal, task_count, revoked}]}`"), ...errors(401, 403) },
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
        get: {
          summary: "Members with roles and sign-in lock `{failures, locked_until}`, and open invitations (signed-in)",
          responses: { ...ok("`{members, invitations}`"), ...errors(401, 403) },
        },
        post: {
          summary:
            "Add a person: a one-time link (7 days) that sets their password and makes them a member (owners, admins; audited)",
          requestBody: { required: true, ...json("Invite") },
          responses: {
            ...ok("`{invitation_url, expires_at, invitation, audit_seq}`"),
            ...errors(400, 401, 403, 409, 422),
          },
        },
      },
      "/api/v1/settings/members/{user_id}": {
        patch: {
          summary:
            "Change a member's role, effective on their next request (owners, admins; only owners touch the owner role: 403 not_allowed; 409 last_owner)",
          parameters: [{ name: "user_id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
          requestBody: { required: true, ...json("ChangeRole") },
          responses: {
            ...ok("`{user_id, email, role, previous_role, changed, audit_seq}`"),
            ...errors(400, 401, 403, 404, 409, 422),
          },
        },
        delete: {
          summary:
            "Remove a member: their sessions here end at once, past decisions keep their name (owners, admins; 403 not_allowed; 409 last_owner)",
          parameters: [{ name: "user_id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
          responses: {
            ...ok("`{removed: true, user_id, email, role, sessions_ended, audit_seq}`"),
            ...errors(401, 403, 404, 409),
          },
        },
      },
      "/api/v1/settings/invitations": {
        post: {
          summary:
            "A one-time invitation link (7 days, single use; only its hash stored) for `{email, role}` (owners, admins; 409 already_member; audited)",
          requestBody: { required: true, ...json("Invite") },
          responses: {
            ...ok("`{invitation_url, expires_at, invitation, audit_seq}`"),
            ...errors(400, 401, 403, 409, 422),
          },
        },
      },
      "/api/v1/invitations/{token}/accept": {
        post: {
          summary:
            "Use an invitation link: sets the new account's password (or checks an existing account's) and joins the workspace. No session needed; 410 when used, expired or withdrawn",
          security: [],
          parameters: [{ name: "token", in: "path", required: true, schema: { type: "string" } }],
          requestBody: { required: true, ...json("AcceptInvitation") },
          responses: {
            ...ok("`{user_id, email, role, workspace, account_created}`"),
            ...errors(400, 403, 404, 409, 422),
            "410": { description: "The link was used, expired or withdrawn (`details.reason`)", ...json("Error") },
            "429": { description: "Too many password tries (sign-in throttle)", ...json("Error") },
          },
        },
      },
      "/api/v1/me": {
        get: {
          summary: "The signed-in person, the workspace this session works in, and their workspaces (sessions only)",
          responses: { ...ok("`{user_id, email, name, role, workspace, workspaces}`"), ...errors(401, 403) },
        },
      },
      "/api/v1/me/workspace": {
        put: {
          summary: "Switch this session to another workspace of the person (by slug)",
          requestBody: { required: true, ...json("SwitchWorkspace") },
          responses: { ...ok("`{tenant_id, slug, name, role, current}`"), ...errors(400, 401, 403, 404, 422) },
        },
      },
      "/api/v1/me/password": {
        post: {
          summary: "Change one's own password (current one required; other sessions end; audited)",
          requestBody: { required: true, ...json("ChangePassword") },
          responses: {
            ...ok("`{changed: true, sessions_ended, audit_seq}`"),
            ...errors(400, 401, 403, 422),
            "429": { description: "Too many password tries", ...json("Error") },
          },
        },
      },
      "/api/v1/settings/members/{user_id}/unlock": {
        post: {
          summary:
            "Forget a locked-out member's failed sign-ins so the right password works again (owners, admins; signed-in; audited)",
          parameters: [{ name: "user_id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
          responses: {
            ...ok("`{unlocked: true, user_id, email, failures, audit_seq}`"),
            ...errors(401, 403, 404, 409),
          },
        },
      },
      "/api/v1/maps": {
        get: {
          summary: "The tenant's custody maps with progress and recommendation (any signed-in role)",
          security: session,
          parameters: [
            { name: "q", in: "query", description: "Part of the workflow or title", schema: { type: "string" } },
            { name: "status", in: "query", schema: { type: "string", enum: ["draft", "published"] } },
            {
              name: "attention",
              in: "query",
              schema: { type: "string", enum: ["failed", "undecided", "evidence_requested", "unverified"] },
            },
          ],
          responses: {
            ...ok(
              "`{maps: [{id, workflow, title, version, status, updated_at, progress, recommendation, exercises}]}`",
            ),
            ...errors(400, 401, 403),
          },
        },
        post: {
          summary: "Start a custody map: a draft with the eight layers and our worksheet text (owners, admins)",
          security: session,
          requestBody: { required: true, ...json("CreateMap") },
          responses: {
            ...ok("The map `{id, workflow, title, version, status, layers, summary, progress, versions}`"),
            ...errors(400, 401, 403, 422),
          },
        },
      },
      "/api/v1/maps/import": {
        post: {
          summary: "Import a map's JSON export as a new draft (owners, admins); 422 names every field path",
          security: session,
          requestBody: { required: true, ...json("MapImport") },
          responses: { ...ok("The new map"), ...errors(400, 401, 403, 413, 422) },
        },
      },
      "/api/v1/maps/{map_id}": {
        get: {
          summary: "One map (current draft or latest published; `version` = a published version as frozen)",
          security: session,
          parameters: [mapId, { name: "version", in: "query", schema: { type: "integer", minimum: 1 } }],
          responses: {
            ...ok("`{id, workflow, title, version, status, layers: [LayerRow × 8], summary, progress, versions}`"),
            ...errors(400, 401, 403, 404),
          },
        },
        patch: {
          summary:
            "Rename and/or archive (`archived: true`) or bring back a map; audited (owners, admins; decision 0046)",
          security: session,
          parameters: [mapId],
          requestBody: { required: true, ...object("`{title?, archived?}`") },
          responses: { ...ok("The map"), ...errors(400, 401, 403, 404, 409, 422) },
        },
      },
      "/api/v1/maps/{map_id}/import": {
        post: {
          summary:
            "Take a JSON export of the same workflow as this map's next draft; published versions stay frozen (owners, admins; decision 0046)",
          security: session,
          parameters: [mapId],
          requestBody: { required: true, ...json("MapImport") },
          responses: { ...ok("The map with its new draft"), ...errors(400, 401, 403, 404, 413, 422) },
        },
      },
      "/api/v1/maps/{map_id}/signoff": {
        post: {
          summary:
            "Sign off the latest published version as a reviewer who did not make its last change (owners, admins, approvers; 403 `signoff_by_last_editor`, 409 `already_signed_off`; decision 0046)",
          security: session,
          parameters: [mapId],
          requestBody: { required: true, ...object("`{version, note?}`") },
          responses: { ...ok("The map, signed off"), ...errors(400, 401, 403, 404, 409, 422) },
        },
      },
      "/api/v1/maps/{map_id}/layers/{layer}/assignee": {
        put: {
          summary: "Set or clear the member who carries a layer; audited (owners, admins; decision 0046)",
          security: session,
          parameters: [mapId, layerParam],
          requestBody: { required: true, ...object("`{assignee: email | null}`") },
          responses: { ...ok("`{assignee}`"), ...errors(400, 401, 403, 404, 422) },
        },
      },
      "/api/v1/maps/{map_id}/layers/{layer}/comments": {
        post: {
          summary:
            "Comment on a layer (1–2,000 characters); audited (owners, admins, approvers, responders; decision 0046)",
          security: session,
          parameters: [mapId, layerParam],
          requestBody: { required: true, ...object("`{text}`") },
          responses: { ...ok("`{id, layer, author, body, created_at}`"), ...errors(400, 401, 403, 404, 422) },
        },
      },
      "/api/v1/maps/{map_id}/layers/{layer}/evidence": {
        post: {
          summary:
            "Add an evidence item to a layer: an exercise, task or bundle of this workspace, or an http(s) document link; audited (owners, admins; decision 0046)",
          security: session,
          parameters: [mapId, layerParam],
          requestBody: { required: true, ...object("`{kind: exercise|task|bundle|document, ref, note?}`") },
          responses: {
            ...ok("`{id, layer, kind, ref, note, added_by, added_at}`"),
            ...errors(400, 401, 403, 404, 422),
          },
        },
      },
      "/api/v1/maps/{map_id}/layers/{layer}/evidence/{evidence_id}": {
        delete: {
          summary: "Remove an evidence item; audited (owners, admins; decision 0046)",
          security: session,
          parameters: [
            mapId,
            layerParam,
            { name: "evidence_id", in: "path", required: true, schema: { type: "string", format: "uuid" } },
          ],
          responses: { ...ok("`{removed: item}`"), ...errors(401, 403, 404, 422) },
        },
      },
      "/api/v1/maps/{map_id}/layers/{layer}": {
        patch: {
          summary:
            "Change one row with the revision it was based on (owners, admins); 409 with both versions when stale",
          security: session,
          parameters: [
            mapId,
            { name: "layer", in: "path", required: true, schema: { type: "string", enum: [...MAP_LAYERS] } },
          ],
          requestBody: { required: true, ...json("LayerPatch") },
          responses: {
            ...ok("`{row: LayerRow, map: {id, version, status, new_draft}, summary, progress, changed}`"),
            ...errors(400, 401, 403, 404, 409, 422),
          },
        },
      },
      "/api/v1/maps/{map_id}/publish": {
        post: {
          summary: "Freeze the draft as a published version; the next change starts a new draft (owners, admins)",
          security: session,
          parameters: [mapId],
          responses: { ...ok("The map, now published"), ...errors(401, 403, 404, 409, 422) },
        },
      },
      "/api/v1/maps/{map_id}/export": {
        get: {
          summary: "Download the map as Markdown or as the JSON that import takes back",
          security: session,
          parameters: [
            mapId,
            { name: "format", in: "query", required: true, schema: { type: "string", enum: ["md", "json"] } },
            { name: "version", in: "query", schema: { type: "integer", minimum: 1 } },
          ],
          responses: {
            "200": {
              description: "`json`: `{id, workflow, title, version, status, layers}`; `md`: text/markdown",
              content: {
                "application/json": { schema: { type: "object" } },
                "text/markdown": { schema: { type: "string" } },
              },
            },
            ...errors(400, 401, 403, 404),
          },
        },
      },
      "/api/v1/maps/{map_id}/exercises": {
        get: {
          summary: "Interruption exercises of a map, newest first",
          security: session,
          parameters: [mapId],
          responses: {
            ...ok(
              "`{exercises: [{id, interruption_point, layers, status, outcome, finding, created_at, completed_at, updated_at}]}`",
            ),
            ...errors(401, 403, 404),
          },
        },
        post: {
          summary: "Start an interruption exercise: the interruption point and the layers it covers (owners, admins)",
          security: session,
          parameters: [mapId],
          requestBody: { required: true, ...json("CreateExercise") },
          responses: { ...ok("The exercise (in progress, six steps not done)"), ...errors(400, 401, 403, 404, 422) },
        },
      },
      "/api/v1/maps/{map_id}/exercises/{exercise_id}": {
        get: {
          summary:
            "One exercise, with what the product knows about each linked task (checkpoints, unknown side effects, artifacts, gate verdict)",
          security: session,
          parameters: [mapId, exerciseId],
          responses: {
            ...ok(
              "`{id, map_id, interruption_point, layers, steps, status, outcome, finding, revision, map, linked_tasks}`",
            ),
            ...errors(401, 403, 404),
          },
        },
        patch: {
          summary:
            "Record progress: steps with status and evidence, layers, draft outcome and finding, with the revision (owners, admins)",
          security: session,
          parameters: [mapId, exerciseId],
          requestBody: { required: true, ...json("UpdateExercise") },
          responses: { ...ok("The exercise"), ...errors(400, 401, 403, 404, 409, 422) },
        },
      },
      "/api/v1/maps/{map_id}/exercises/{exercise_id}/export": {
        post: {
          summary:
            "Build, verify and record the evidence bundle of the task linked to the exercise's export step; its digest and result go into the step (owners, admins; decision 0038)",
          security: session,
          parameters: [mapId, exerciseId],
          responses: { ...ok("`{exercise, first_failure}`"), ...errors(401, 403, 404, 409, 422) },
        },
      },
      "/api/v1/export": {
        get: {
          summary:
            "The workspace bundle (application/gzip, streamed): tasks created in [from, to) as task bundles, maps, policies, approval settings, members without hashes, the audit chain whole (owners, admins; decision 0038)",
          security: session,
          responses: { ...ok("The `.tar.gz` archive"), ...errors(400, 401, 403, 422) },
        },
      },
      "/api/v1/maps/{map_id}/exercises/{exercise_id}/complete": {
        post: {
          summary:
            "Complete an exercise: sets the covered layers' verification (failed for unsafe) with a link back (owners, admins)",
          security: session,
          parameters: [mapId, exerciseId],
          requestBody: { required: true, ...json("CompleteExercise") },
          responses: {
            ...ok("`{exercise, layers: [LayerRow], map: {id, version, status, new_draft}}`"),
            ...errors(400, 401, 403, 404, 409, 422),
          },
        },
      },
      "/api/v1/approvals": {
        get: {
          summary:
            "Approvals, oldest first (keyset): status (pending, stale, approved, rejected) computed now; filters status, task_id, action",
          parameters: [
            {
              name: "status",
              in: "query",
              schema: { type: "string", enum: ["pending", "stale", "approved", "rejected"] },
            },
            { name: "task_id", in: "query", schema: { type: "string" } },
            { name: "action", in: "query", schema: { type: "string" } },
            { name: "cursor", in: "query", schema: { type: "string" } },
            { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 200 } },
          ],
          responses: {
            ...ok(
              "`{approvals: [{id, task_id, side_effect, idempotency_key, principal, action, tool, payload_digest, input_digest, policy_version, agent, agent_version, requested_by, requested_at, status, stale_reasons, decision?}], next_cursor}`",
            ),
            ...errors(400, 401, 422),
          },
        },
      },
      "/api/v1/approvals/{approval_id}": {
        get: {
          summary:
            "One approval with its payload (secrets redacted) and, when stale, `changes: [{field, approved, current}]`",
          parameters: [{ name: "approval_id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
          responses: { ...ok("The approval plus `payload`, `offered_payload`, `changes`"), ...errors(401, 404) },
        },
      },
      "/api/v1/approvals/{approval_id}/decision": {
        post: {
          summary:
            "Approve or reject (reason required to reject): signed-in approvers, admins and owners only; the requester may not decide their own (unless the tenant relaxed it). A stale one is re-approved against the current values (a new approval that supersedes it). Exactly one of concurrent deciders wins; the others get 409 already_decided {decision, decided_by}.",
          security: session,
          parameters: [{ name: "approval_id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
          requestBody: { required: true, ...json("Decision") },
          responses: { ...ok("The approval with its stored decision"), ...errors(401, 403, 404, 409, 422) },
        },
      },
      "/api/v1/policies": {
        get: {
          summary: "Policy versions, newest first (every role and runtime keys)",
          responses: {
            ...ok("`{policies: [{version, digest, valid, created_by, created_at, active, activated_at}]}`"),
            ...errors(401),
          },
        },
        post: {
          summary:
            "Store a policy document (JSON, or YAML with content-type application/yaml) as the next version, with its lint findings; the same document again answers 200 with the version it has. A version with lint errors is kept but cannot be activated (owners, admins)",
          security: session,
          requestBody: policyBody,
          responses: {
            "201": { description: "`{version, digest, valid, findings}`" },
            ...ok("The same document was stored before: `{version, digest, valid, findings}`"),
            ...errors(400, 401, 403, 413, 415, 422),
          },
        },
      },
      "/api/v1/policies/lint": {
        post: {
          summary:
            "Lint a policy document (JSON, or YAML with content-type application/yaml); stores nothing. Runtime keys (lint in your own CI) and every signed-in role",
          security: [{ runtimeKey: [] }, { session: [] }],
          requestBody: policyBody,
          responses: {
            ...ok("`{valid, findings: [{severity: error|warning, rule, path, message}]}`"),
            ...errors(400, 401, 403, 413, 415, 422),
          },
        },
      },
      "/api/v1/policies/{version}": {
        get: {
          summary: "One policy version with its document, the text as sent, and its findings",
          parameters: [policyVersion],
          responses: {
            ...ok(
              "`{version, digest, valid, active, created_by, created_at, activated_at, document, source_text, source_format, findings}`",
            ),
            ...errors(400, 401, 404),
          },
        },
      },
      "/api/v1/policies/current": {
        get: {
          summary:
            "The current policy version with its document and findings (as `GET /api/v1/policies/{version}`), or `{policy: null}` when none was ever activated",
          responses: { ...ok("The current version, or `{policy: null}`"), ...errors(401) },
        },
      },
      "/api/v1/policies/{version}/activate": {
        post: {
          summary:
            "Make a stored version current (owners, admins; no body): the one way to change the policy version approvals bind to. Approvals bound to another version become stale at once (audited, on their tasks' timelines); a version with lint errors is refused (422 policy_invalid)",
          security: session,
          parameters: [{ name: "version", in: "path", required: true, schema: { type: "integer", minimum: 1 } }],
          responses: {
            ...ok("`{version, digest, previous, changed, invalidated: [{id, task_id, side_effect}]}`"),
            ...errors(400, 401, 403, 404, 422),
          },
        },
      },
      "/api/v1/audit": {
        get: {
          summary:
            "The audit log, newest first, with the Audit page's filters (decision 0048): `{entries: [{seq, at, actor_kind, actor_id, actor_label, action, target, details, prev_hash, hash}], next_cursor}`; pass next_cursor back as `before` with the same filters. People of any role, and full or read-only keys",
          security: auditReaders,
          parameters: [
            ...auditFilters,
            {
              name: "before",
              in: "query",
              description: "Entries before this sequence number (the previous page's next_cursor)",
              schema: { type: "integer", minimum: 1 },
            },
            { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 200, default: 50 } },
          ],
          responses: { ...ok("`{entries, next_cursor}`"), ...errors(400, 401, 403) },
        },
      },
      "/api/v1/audit/export": {
        get: {
          summary:
            "Every entry the filters select (as `GET /api/v1/audit`), newest first, streamed as JSON Lines (`application/x-ndjson`, attachment): one entry per line with `tenant_id`, `actor_id`, `prev_hash` and `hash`, all its hash covers, so the chain checks offline (decision 0048)",
          security: auditReaders,
          parameters: auditFilters,
          responses: {
            200: {
              description: "JSON Lines, one audit entry per line",
              content: { "application/x-ndjson": { schema: { type: "string" } } },
            },
            ...errors(400, 401, 403),
          },
        },
      },
      "/api/v1/audit/verify": {
        get: {
          summary:
            "Recompute the tenant's audit hash chain and compare its end with the recorded head: `{valid: true}` or `{valid: false, first_bad_entry, truncated?}`",
          security: auditReaders,
          responses: { ...ok("`{valid, checked, first_bad_entry?, truncated?}`"), ...errors(401, 403) },
        },
      },
      "/api/v1/settings/approvals": {
        get: {
          summary: "Approval settings: policy version, default TTL, self-approval, approval-required actions",
          security: session,
          responses: { ...ok("Settings"), ...errors(401) },
        },
        put: {
          summary:
            "Change the default approval TTL, self-approval, or whether a retry after not_applied reuses the approval its first go used (retry_after_not_applied_reuses_approval, default false) (owners, admins)",
          security: session,
          requestBody: { required: true, ...json("ApprovalSettings") },
          responses: { ...ok("`{updated: true}`"), ...errors(401, 403, 422) },
        },
      },
      "/api/v1/settings/retention": {
        get: {
          summary:
            "Retention settings (decision 0054): `{event_retention_days (null = keep events forever), export_before_delete, updated_by, updated_at}` (signed-in, any role)",
          security: session,
          responses: { ...ok("Settings"), ...errors(401, 403) },
        },
        put: {
          summary:
            "Save both retention settings: `{event_retention_days: 1–36500 | null, export_before_delete: boolean}` (owners, admins; audited settings.retention_changed)",
          security: session,
          requestBody: { required: true, ...json("RetentionSettings") },
          responses: { ...ok("The saved settings"), ...errors(400, 401, 403, 422) },
        },
      },
      "/api/v1/settings/approval-rules/{action}": {
        put: {
          summary: "Mark an action approval-required, with its own TTL (owners, admins)",
          security: session,
          parameters: [{ name: "action", in: "path", required: true, schema: { type: "string" } }],
          requestBody: { required: true, ...json("ApprovalRule") },
          responses: { ...ok("`{action, saved: true}`"), ...errors(401, 403, 422) },
        },
        delete: {
          summary: "Stop requiring approval for an action (owners, admins)",
          security: session,
          parameters: [{ name: "action", in: "path", required: true, schema: { type: "string" } }],
          responses: { ...ok("`{action, removed: true}`"), ...errors(401, 403) },
        },
      },
      "/api/v1/settings/lookups": {
        get: {
          summary: "The tools' registered lookup endpoints (signed-in)",
          security: session,
          responses: { ...ok("`{lookups: [{tool, url, timeout_ms, updated_at}]}`"), ...errors(401, 403) },
        },
      },
      "/api/v1/settings/lookups/{tool}": {
        put: {
          summary: "Register a tool's lookup endpoint (owners, admins; signed-in)",
          parameters: [{ name: "tool", in: "path", required: true, schema: { type: "string" } }],
          requestBody: { required: true, ...json("Lookup") },
          responses: { ...ok("The lookup"), ...errors(401, 403, 422) },
        },
        delete: {
          summary: "Remove a tool's lookup endpoint (owners, admins; signed-in)",
          security: session,
          parameters: [{ name: "tool", in: "path", required: true, schema: { type: "string" } }],
          responses: { ...ok("`{deleted: true}`"), ...errors(401, 403, 404) },
        },
      },
      // Standard Webhooks in and out (decision 0040).
      "/api/v1/settings/webhook-sources": {
        get: {
          summary: "Webhook sources with their trusted actions and secrets' ids (signed-in; never a secret)",
          security: session,
          responses: {
            ...ok("`{sources: [{name, trusted_actions, secrets: [{id, created_at}], created_by, created_at}]}`"),
            ...errors(401, 403),
          },
        },
        post: {
          summary: "Register a webhook source; its whsec_ secret is shown this once (owners, admins)",
          security: session,
          requestBody: { required: true, ...json("WebhookSource") },
          responses: { ...ok("`{name, secret, secret_id, trusted_actions, url_path}`"), ...errors(401, 403, 409, 422) },
        },
      },
      "/api/v1/settings/webhook-sources/{source}": {
        patch: {
          summary: "Replace the actions a source is trusted to settle (owners, admins)",
          security: session,
          parameters: [PARAM_SOURCE],
          requestBody: { required: true, ...json("WebhookTrust") },
          responses: { ...ok("`{name, trusted_actions}`"), ...errors(401, 403, 404, 422) },
        },
        delete: {
          summary: "Delete a source and its secrets (owners, admins)",
          security: session,
          parameters: [PARAM_SOURCE],
          responses: { ...ok("`{deleted: true}`"), ...errors(401, 403, 404) },
        },
      },
      "/api/v1/settings/webhook-sources/{source}/secrets": {
        post: {
          summary: "Rotate: add a second secret, valid beside the first until it is removed (owners, admins)",
          security: session,
          parameters: [PARAM_SOURCE],
          responses: { ...ok("`{name, secret, secret_id}`"), ...errors(401, 403, 404, 409) },
        },
      },
      "/api/v1/settings/webhook-sources/{source}/secrets/{secret_id}": {
        delete: {
          summary: "Remove one secret of a source; the only one cannot be removed (owners, admins)",
          security: session,
          parameters: [
            PARAM_SOURCE,
            { name: "secret_id", in: "path", required: true, schema: { type: "string", format: "uuid" } },
          ],
          responses: { ...ok("`{deleted: true}`"), ...errors(401, 403, 404, 409) },
        },
      },
      "/api/v1/webhooks/{source}": {
        post: {
          summary:
            "A Standard Webhooks message from a registered source (webhook-id, webhook-timestamp, webhook-signature; 5-minute window): an operation's outcome, kept as evidence, settling an unknown effect when the source is trusted for its action; a replayed webhook-id stores nothing",
          security: [],
          parameters: [PARAM_SOURCE],
          requestBody: { required: true, ...json("OutcomeReport") },
          responses: {
            ...ok("`{webhook_id, duplicate, disposition: settled | evidence | unmatched, side_effect, note?}`"),
            ...errors(400, 401, 413, 422),
          },
        },
      },
      "/api/v1/tasks/{task_id}/side-effects/{name}/payload": {
        get: {
          summary:
            "The write's request payload for its current digest (its intent's, secrets redacted; else its approval request's), pretty-printed and capped at 64 Ki characters",
          parameters: [taskId, effect],
          responses: { ...ok("`{payload_digest, source, text, truncated}`"), ...errors(401, 403, 404) },
        },
      },
      "/api/v1/tasks/{task_id}/side-effects/{name}/webhook-reports": {
        get: {
          summary: "What webhook sources reported about the effect's idempotency key, newest first",
          parameters: [
            { name: "task_id", in: "path", required: true, schema: { type: "string" } },
            { name: "name", in: "path", required: true, schema: { type: "string" } },
          ],
          responses: {
            ...ok(
              "`{reports: [{source, webhook_id, received_at, outcome, external_operation_id, result_digest, disposition}]}`",
            ),
            ...errors(401, 403, 404),
          },
        },
      },
      "/api/v1/settings/notification-endpoints": {
        get: {
          summary: "Notification endpoints (signed-in; never a secret)",
          security: session,
          responses: {
            ...ok("`{endpoints: [{id, url, events, format, created_by, created_at}]}`"),
            ...errors(401, 403),
          },
        },
        post: {
          summary:
            "Register an HTTPS endpoint for events; refused with the reason for a non-HTTPS, link-local, metadata, loopback or private address (the last two unless allowed) or a redirect; the secret is shown this once (owners, admins)",
          security: session,
          requestBody: { required: true, ...json("NotificationEndpoint") },
          responses: {
            ...ok("`{id, secret, url, events, format, created_by, created_at, warnings}`"),
            ...errors(401, 403, 409, 422),
          },
        },
      },
      "/api/v1/settings/notification-endpoints/{endpoint_id}": {
        delete: {
          summary: "Remove an endpoint; its pending deliveries are marked failed (owners, admins)",
          security: session,
          parameters: [{ name: "endpoint_id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
          responses: { ...ok("`{deleted: true}`"), ...errors(401, 403, 404) },
        },
      },
      "/api/v1/settings/notifications": {
        get: {
          summary: "Whether endpoints may be on loopback and private addresses (signed-in)",
          security: session,
          responses: { ...ok("`{allow_private_addresses}`"), ...errors(401, 403) },
        },
        put: {
          summary: "Allow or refuse endpoints on loopback and private addresses (owners, admins)",
          security: session,
          requestBody: { required: true, ...json("NotificationSettings") },
          responses: { ...ok("`{allow_private_addresses}`"), ...errors(401, 403, 422) },
        },
      },
      "/api/v1/settings/notification-deliveries": {
        get: {
          summary: "The delivery log, newest first (limit 1–200, optional endpoint_id; signed-in)",
          security: session,
          parameters: [
            { name: "endpoint_id", in: "query", required: false, schema: { type: "string", format: "uuid" } },
            { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 200 } },
          ],
          responses: {
            ...ok("`{deliveries: [{id, endpoint_id, event, status, attempts, …}]}`"),
            ...errors(401, 403, 404, 422),
          },
        },
      },
      "/api/v1/settings/notification-deliveries/{delivery_id}/resend": {
        post: {
          summary: "Send a delivery again under the same webhook-id (owners, admins)",
          security: session,
          parameters: [{ name: "delivery_id", in: "path", required: true, schema: { type: "string" } }],
          responses: { ...ok("The delivery, pending again"), ...errors(401, 403, 404) },
        },
      },
    },
  };
}
