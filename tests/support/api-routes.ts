/**
 * Every route of the runtime API (app/api/v1) in one place, for suites that go over all of them (the fuzz suite, and
 * the authorization matrix in tests/integration/authz-matrix.test.ts, which needs a row of its own for each route).
 * Adding a route is one line here: a test fails while a route file under app/api/v1 exports a method this list does
 * not name.
 *
 * `body`: what the route reads — `json` (a JSON body, with the zod `schema` bodies are generated from, or a
 * hand-written `arbitrary` for the events envelope), `optional` (JSON or nothing), `none` (no body; a GET, or an
 * action that refuses one). `auth`: who may call it — a runtime API key, or a person signed in with that role.
 */
import fs from "node:fs";
import path from "node:path";
import type { z } from "zod";
import { eventInputSchema } from "@/lib/domain/events/schema";
import { resumeBodySchema } from "@/lib/domain/gate/ask";
import { lookupBodySchema } from "@/lib/domain/settings/lookups";
import { restorePrincipalBodySchema, revokePrincipalBodySchema } from "@/lib/domain/settings/principals";
import { intentBodySchema } from "@/lib/domain/side-effects/intent";
import { receiptBodySchema } from "@/lib/domain/side-effects/receipt";
import { reconcileBodySchema } from "@/lib/domain/side-effects/reconcile";
import { fenceBodySchema } from "@/lib/domain/tasks/fence";
import { terminateBodySchema } from "@/lib/domain/tasks/terminate";
import { deleteTaskBodySchema } from "@/lib/domain/tasks/delete";
import { retentionSettingsBodySchema } from "@/lib/domain/settings/retention";
import { acceptToolBodySchema } from "@/lib/domain/gate/accept-tool";
import { taskRecordSchema } from "@/lib/domain/tasks/record";
import { createApiKeyBodySchema } from "@/lib/domain/tenancy/api-keys";
import { completeExerciseSchema, createExerciseSchema, updateExerciseSchema } from "@/lib/domain/exercises/rules";
import { createMapSchema, layerPatchSchema, mapImportSchema } from "@/lib/domain/maps/rules";
import { assigneeBodySchema, commentBodySchema, evidenceItemBodySchema } from "@/lib/domain/maps/layer-work";
import { mapPatchSchema } from "@/lib/domain/maps/manage";
import { signoffBodySchema } from "@/lib/domain/maps/signoff";
import { changePasswordBodySchema, switchWorkspaceBodySchema } from "@/lib/domain/tenancy/account";
import { acceptBodySchema, inviteBodySchema } from "@/lib/domain/tenancy/invitations";
import { changeRoleBodySchema } from "@/lib/domain/tenancy/members";
import { policyDocumentSchema } from "@/lib/domain/policies/document";
import { decisionBodySchema } from "@/lib/domain/approvals/decide";
import { actionRuleBodySchema, approvalSettingsBodySchema } from "@/lib/domain/approvals/settings";
import { endpointBodySchema, notificationSettingsSchema } from "@/lib/domain/notifications/endpoints";
import { outcomeReportSchema } from "@/lib/domain/webhooks/receive";
import { sourceBodySchema, trustBodySchema } from "@/lib/domain/webhooks/sources";

/** `public`: no credentials (the invitation link's page). */
export type RouteAuth = "runtime" | "owner" | "approver" | "responder" | "viewer" | "public";

export type RouteSpec = {
  auth: RouteAuth;
  body: "json" | "optional" | "none";
  /** zod schema of the body (`json`/`optional`); the events envelope wraps {@link eventInputSchema}. */
  schema?: z.ZodType;
  /** The body is `{"events": [<schema>…]}`. */
  envelope?: "events";
};

/** `METHOD /api/v1/…` with path parameters as in the file tree (`[taskId]`). */
export const API_ROUTES: Record<string, RouteSpec> = {
  "POST /api/v1/events": { auth: "runtime", body: "json", schema: eventInputSchema, envelope: "events" },
  "GET /api/v1/openapi.json": { auth: "runtime", body: "none" },
  "GET /api/v1/signing-keys": { auth: "runtime", body: "none" },
  "GET /api/v1/tasks": { auth: "runtime", body: "none" },
  "GET /api/v1/tasks/[taskId]": { auth: "runtime", body: "none" },
  "PUT /api/v1/tasks/[taskId]": { auth: "runtime", body: "json", schema: taskRecordSchema },
  "DELETE /api/v1/tasks/[taskId]": { auth: "owner", body: "json", schema: deleteTaskBodySchema },
  "GET /api/v1/tasks/[taskId]/timeline": { auth: "runtime", body: "none" },
  "GET /api/v1/tasks/[taskId]/timeline/overview": { auth: "runtime", body: "none" },
  "GET /api/v1/tasks/[taskId]/events/[eventId]": { auth: "runtime", body: "none" },
  "GET /api/v1/tasks/[taskId]/events": { auth: "runtime", body: "none" },
  "GET /api/v1/tasks/[taskId]/checkpoints": { auth: "runtime", body: "none" },
  "GET /api/v1/tasks/[taskId]/export": { auth: "runtime", body: "none" },
  "GET /api/v1/tasks/[taskId]/artifacts": { auth: "runtime", body: "none" },
  "GET /api/v1/tasks/[taskId]/artifacts/[sha256]": { auth: "runtime", body: "none" },
  "GET /api/v1/tasks/[taskId]/artifacts/[sha256]/content": { auth: "runtime", body: "none" },
  "PUT /api/v1/tasks/[taskId]/artifacts/[sha256]/content": { auth: "runtime", body: "optional" },
  "GET /api/v1/tasks/[taskId]/egress": { auth: "runtime", body: "none" },
  "GET /api/v1/tasks/[taskId]/credentials": { auth: "runtime", body: "none" },
  "POST /api/v1/tasks/[taskId]/credentials/[ref]/revocation-check": { auth: "responder", body: "none" },
  "POST /api/v1/tasks/[taskId]/fence": { auth: "responder", body: "optional", schema: fenceBodySchema },
  "POST /api/v1/tasks/[taskId]/terminate": { auth: "responder", body: "json", schema: terminateBodySchema },
  "POST /api/v1/tasks/[taskId]/resume": { auth: "runtime", body: "optional", schema: resumeBodySchema },
  "POST /api/v1/tasks/[taskId]/tool-definitions/[tool]/accept": {
    auth: "approver",
    body: "json",
    schema: acceptToolBodySchema,
  },
  "POST /api/v1/tasks/[taskId]/side-effects/[name]/intent": { auth: "runtime", body: "json", schema: intentBodySchema },
  "POST /api/v1/tasks/[taskId]/side-effects/[name]/receipt": {
    auth: "runtime",
    body: "json",
    schema: receiptBodySchema,
  },
  "POST /api/v1/import/openai-agents/run-state": { auth: "runtime", body: "json" },
  "POST /api/v1/traces": { auth: "runtime", body: "json" },
  "POST /api/v1/traces/ingest": { auth: "runtime", body: "json" },
  "POST /api/v1/tasks/[taskId]/side-effects/[name]/reconcile": {
    auth: "responder",
    body: "json",
    schema: reconcileBodySchema,
  },
  "POST /api/v1/tasks/[taskId]/side-effects/[name]/lookup": { auth: "responder", body: "none" },
  "GET /api/v1/settings/api-keys": { auth: "owner", body: "none" },
  "POST /api/v1/settings/api-keys": { auth: "owner", body: "json", schema: createApiKeyBodySchema },
  "POST /api/v1/settings/api-keys/[keyId]/revoke": { auth: "owner", body: "none" },
  "GET /api/v1/settings/lookups": { auth: "owner", body: "none" },
  "PUT /api/v1/settings/lookups/[tool]": { auth: "owner", body: "json", schema: lookupBodySchema },
  "DELETE /api/v1/settings/lookups/[tool]": { auth: "owner", body: "none" },
  "GET /api/v1/settings/members": { auth: "owner", body: "none" },
  "POST /api/v1/settings/members/[userId]/unlock": { auth: "owner", body: "none" },
  "GET /api/v1/settings/principals": { auth: "owner", body: "none" },
  "POST /api/v1/settings/principals/revoke": { auth: "owner", body: "json", schema: revokePrincipalBodySchema },
  "POST /api/v1/settings/principals/restore": { auth: "owner", body: "json", schema: restorePrincipalBodySchema },
  "POST /api/v1/settings/members": { auth: "owner", body: "json", schema: inviteBodySchema },
  "PATCH /api/v1/settings/members/[userId]": { auth: "owner", body: "json", schema: changeRoleBodySchema },
  "DELETE /api/v1/settings/members/[userId]": { auth: "owner", body: "none" },
  "POST /api/v1/settings/invitations": { auth: "owner", body: "json", schema: inviteBodySchema },
  "POST /api/v1/invitations/[token]/accept": { auth: "public", body: "json", schema: acceptBodySchema },
  "GET /api/v1/me": { auth: "viewer", body: "none" },
  "PUT /api/v1/me/workspace": { auth: "viewer", body: "json", schema: switchWorkspaceBodySchema },
  "POST /api/v1/me/password": { auth: "viewer", body: "json", schema: changePasswordBodySchema },
  "GET /api/v1/maps": { auth: "owner", body: "none" },
  "POST /api/v1/maps": { auth: "owner", body: "json", schema: createMapSchema },
  "POST /api/v1/maps/import": { auth: "owner", body: "json", schema: mapImportSchema },
  "GET /api/v1/maps/[mapId]": { auth: "owner", body: "none" },
  "PATCH /api/v1/maps/[mapId]": { auth: "owner", body: "json", schema: mapPatchSchema },
  "POST /api/v1/maps/[mapId]/signoff": { auth: "approver", body: "json", schema: signoffBodySchema },
  "POST /api/v1/maps/[mapId]/import": { auth: "owner", body: "json", schema: mapImportSchema },
  "POST /api/v1/maps/[mapId]/layers/[layer]/evidence": { auth: "owner", body: "json", schema: evidenceItemBodySchema },
  "DELETE /api/v1/maps/[mapId]/layers/[layer]/evidence/[evidenceId]": { auth: "owner", body: "none" },
  "PUT /api/v1/maps/[mapId]/layers/[layer]/assignee": { auth: "owner", body: "json", schema: assigneeBodySchema },
  "POST /api/v1/maps/[mapId]/layers/[layer]/comments": { auth: "responder", body: "json", schema: commentBodySchema },
  "PATCH /api/v1/maps/[mapId]/layers/[layer]": { auth: "owner", body: "json", schema: layerPatchSchema },
  "POST /api/v1/maps/[mapId]/publish": { auth: "owner", body: "none" },
  "GET /api/v1/maps/[mapId]/export": { auth: "owner", body: "none" },
  "GET /api/v1/maps/[mapId]/exercises": { auth: "owner", body: "none" },
  "POST /api/v1/maps/[mapId]/exercises": { auth: "owner", body: "json", schema: createExerciseSchema },
  "GET /api/v1/maps/[mapId]/exercises/[exerciseId]": { auth: "owner", body: "none" },
  "PATCH /api/v1/maps/[mapId]/exercises/[exerciseId]": { auth: "owner", body: "json", schema: updateExerciseSchema },
  "POST /api/v1/maps/[mapId]/exercises/[exerciseId]/complete": {
    auth: "owner",
    body: "json",
    schema: completeExerciseSchema,
  },
  "POST /api/v1/maps/[mapId]/exercises/[exerciseId]/export": { auth: "owner", body: "none" },
  "GET /api/v1/export": { auth: "owner", body: "none" },
  "POST /api/v1/policies/lint": { auth: "runtime", body: "json", schema: policyDocumentSchema },
  "GET /api/v1/policies": { auth: "runtime", body: "none" },
  "POST /api/v1/policies": { auth: "owner", body: "json", schema: policyDocumentSchema },
  "GET /api/v1/policies/current": { auth: "runtime", body: "none" },
  "GET /api/v1/policies/[version]": { auth: "runtime", body: "none" },
  "POST /api/v1/policies/[version]/activate": { auth: "owner", body: "none" },
  // Approvals: runtimes and every role read; approvers (and admins, owners) decide.
  "GET /api/v1/approvals": { auth: "runtime", body: "none" },
  "GET /api/v1/approvals/[approvalId]": { auth: "runtime", body: "none" },
  "POST /api/v1/approvals/[approvalId]/decision": { auth: "approver", body: "json", schema: decisionBodySchema },
  // The audit log (decision 0048): every role and full or read-only keys read, filter and export it.
  "GET /api/v1/audit": { auth: "runtime", body: "none" },
  "GET /api/v1/audit/export": { auth: "runtime", body: "none" },
  "GET /api/v1/audit/verify": { auth: "runtime", body: "none" },
  "GET /api/v1/settings/approvals": { auth: "viewer", body: "none" },
  "PUT /api/v1/settings/approvals": { auth: "owner", body: "json", schema: approvalSettingsBodySchema },
  "GET /api/v1/settings/retention": { auth: "viewer", body: "none" },
  "PUT /api/v1/settings/retention": { auth: "owner", body: "json", schema: retentionSettingsBodySchema },
  "PUT /api/v1/settings/approval-rules/[action]": { auth: "owner", body: "json", schema: actionRuleBodySchema },
  "DELETE /api/v1/settings/approval-rules/[action]": { auth: "owner", body: "none" },
  // Standard Webhooks in and out (decision 0040).
  "GET /api/v1/settings/webhook-sources": { auth: "viewer", body: "none" },
  "POST /api/v1/settings/webhook-sources": { auth: "owner", body: "json", schema: sourceBodySchema },
  "PATCH /api/v1/settings/webhook-sources/[source]": { auth: "owner", body: "json", schema: trustBodySchema },
  "DELETE /api/v1/settings/webhook-sources/[source]": { auth: "owner", body: "none" },
  "POST /api/v1/settings/webhook-sources/[source]/secrets": { auth: "owner", body: "none" },
  "DELETE /api/v1/settings/webhook-sources/[source]/secrets/[secretId]": { auth: "owner", body: "none" },
  "POST /api/v1/webhooks/[source]": { auth: "public", body: "json", schema: outcomeReportSchema },
  "GET /api/v1/tasks/[taskId]/side-effects/[name]/webhook-reports": { auth: "runtime", body: "none" },
  "GET /api/v1/tasks/[taskId]/side-effects/[name]/payload": { auth: "runtime", body: "none" },
  "GET /api/v1/settings/notification-endpoints": { auth: "viewer", body: "none" },
  "POST /api/v1/settings/notification-endpoints": { auth: "owner", body: "json", schema: endpointBodySchema },
  "DELETE /api/v1/settings/notification-endpoints/[endpointId]": { auth: "owner", body: "none" },
  "GET /api/v1/settings/notification-deliveries": { auth: "viewer", body: "none" },
  "POST /api/v1/settings/notification-deliveries/[deliveryId]/resend": { auth: "owner", body: "none" },
  "GET /api/v1/settings/notifications": { auth: "viewer", body: "none" },
  "PUT /api/v1/settings/notifications": { auth: "owner", body: "json", schema: notificationSettingsSchema },
};

/** `METHOD /api/v1/…` for every method each route file under app/api/v1 exports itself (not its 405 handlers). */
export function routeFileMethods(root = process.cwd()): string[] {
  const base = path.join(root, "app", "api");
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === "route.ts") {
        const src = fs.readFileSync(full, "utf8");
        const url = "/api/" + path.relative(base, dir).split(path.sep).join("/");
        for (const m of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
          if (new RegExp(`^export (const|async function|function) ${m}\\b`, "m").test(src)) found.push(`${m} ${url}`);
        }
      }
    }
  };
  walk(path.join(base, "v1"));
  return found.sort();
}
