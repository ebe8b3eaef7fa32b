/**
 * The authorization matrix (docs/decisions/0016-tenant-walls.md): every route of the registry
 * (tests/support/api-routes.ts) × every kind of caller, with the expected status of each cell derived once from the
 * compact per-route spec {@link MATRIX} below:
 * - no credentials and a revoked key → 401 (public routes answer everyone alike);
 * - a person of this tenant whose role, or this tenant's runtime key, is not in `allowed` → 403;
 * - an allowed caller of this tenant → `ok`, the status the route gives the probe body (chosen to change nothing:
 *   invalid, stale or aimed at an id that does not exist);
 * - another tenant's runtime key, and another tenant's owner session → 403 when their kind is not allowed, else
 *   `cross`: 404 on this tenant's resources, or `"own"` (the route acts on the caller's own tenant: the same status
 *   as `ok`). Every answer to another tenant's caller must also show nothing of this tenant (no id, slug, email or
 *   title that the request did not itself name).
 * A route in the registry without a row here, or a row for a route that is gone, fails the test.
 *
 * One server, two shared tenants, requests in parallel batches: the whole matrix runs in seconds.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { defaultLayerValues } from "@/lib/domain/maps/create";
import { API_ROUTES, routeFileMethods } from "../support/api-routes";
import { walkRoutes, type RouteCall } from "../support/route-walk";
import { checkpoint, intentBody, newKey, receiptBody } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { unknownEffect } from "./support/seeding";
import {
  api,
  createTestTenant,
  makeRecord,
  newTaskId,
  rid,
  testDbForFile,
  type Auth,
  type FullTestTenant,
  type TestTenant,
} from "./helpers";

const handle = testDbForFile();

/** Who calls. The five roles and `runtime` are of this tenant (A); `other_*` are another tenant's (B). */
const CALLERS = [
  "owner",
  "admin",
  "approver",
  "responder",
  "viewer",
  "runtime",
  "revoked_key",
  "no_credentials",
  "other_key",
  "other_session",
] as const;
type Caller = (typeof CALLERS)[number];
type Allowed = "owner" | "admin" | "approver" | "responder" | "viewer" | "runtime";

const PEOPLE: readonly Allowed[] = ["owner", "admin", "approver", "responder", "viewer"];
const MANAGERS: readonly Allowed[] = ["owner", "admin"];
const DECIDERS: readonly Allowed[] = ["owner", "admin", "responder"];
const READERS: readonly Allowed[] = [...PEOPLE, "runtime"];
const RUNTIME: readonly Allowed[] = ["runtime"];
const APPROVERS: readonly Allowed[] = ["owner", "admin", "approver"];
const IMPORTERS: readonly Allowed[] = ["runtime", "owner", "admin", "responder"];

/** Path parameters; `harmless` ones replace them for this tenant's callers where the real one would change state. */
type Params = {
  taskId: string;
  name: string;
  tool: string;
  keyId: string;
  userId: string;
  mapId: string;
  exerciseId: string;
  layer: string;
  token: string;
  approvalId: string;
  version: string;
  ref: string;
  action: string;
  eventId: string;
  source: string;
  secretId: string;
  endpointId: string;
  deliveryId: string;
  evidenceId: string;
  sha256: string;
};

type Cell = {
  /** Who passes authorization (`public`: the route needs no credentials; everyone gets `ok`). */
  allowed: readonly Allowed[] | "public";
  /** A query string for every caller (e.g. `?format=json`). */
  query?: string;
  /** The body every caller sends (none when absent). */
  probe?: unknown;
  /** The status an allowed caller of this tenant gets with the probe. */
  ok: number;
  /** Parameters for this tenant's callers that keep the probe from changing anything. */
  harmless?: Partial<Params>;
  /** What another tenant's allowed caller gets: 404 on this tenant's resource, or `own` (acts on its own tenant). */
  cross: 404 | "own";
  /** A valid body for another tenant's callers (aimed at this tenant's resource), instead of the probe. */
  crossBody?: unknown;
};

const NO_SUCH_ID = "00000000-0000-4000-8000-000000000000";

/** A valid map document (a new map's eight rows) for another tenant's import into this tenant's map. */
const MATRIX_MAP_DOC = {
  workflow: "matrix",
  title: "Matrix",
  layers: defaultLayerValues().map(({ position: _p, ...row }) => ({ ...row, revision: 1 })),
};

/** The matrix, one row per route of the registry. */
const MATRIX: Record<string, Cell> = {
  "POST /api/v1/events": { allowed: RUNTIME, probe: { events: [] }, ok: 200, cross: "own" },
  "POST /api/v1/traces": { allowed: RUNTIME, probe: {}, ok: 200, cross: "own" },
  "POST /api/v1/traces/ingest": { allowed: RUNTIME, probe: { data: [] }, ok: 200, cross: "own" },
  "GET /api/v1/openapi.json": { allowed: "public", ok: 200, cross: "own" },
  "GET /api/v1/signing-keys": { allowed: "public", ok: 200, cross: "own" },
  "GET /api/v1/tasks": { allowed: READERS, ok: 200, cross: "own" },
  "GET /api/v1/tasks/[taskId]": { allowed: READERS, ok: 200, cross: 404 },
  "PUT /api/v1/tasks/[taskId]": { allowed: RUNTIME, probe: {}, ok: 422, cross: "own" },
  // Deleting a task (decision 0054): a valid probe aimed at no task for this tenant's owners and admins; another
  // tenant's owner deleting this tenant's task finds nothing.
  "DELETE /api/v1/tasks/[taskId]": {
    allowed: MANAGERS,
    probe: { reason: "authorization matrix probe" },
    ok: 404,
    harmless: { taskId: "matrix-no-such-task" },
    cross: 404,
  },
  "GET /api/v1/tasks/[taskId]/timeline": { allowed: READERS, ok: 200, cross: 404 },
  "GET /api/v1/tasks/[taskId]/checkpoints": { allowed: READERS, ok: 200, cross: 404 },
  "GET /api/v1/tasks/[taskId]/export": { allowed: READERS, ok: 200, cross: 404 },
  "GET /api/v1/tasks/[taskId]/artifacts": { allowed: READERS, ok: 200, cross: 404 },
  // The digest names no listed artifact (and no bytes): 404 for everyone; the upload's probe bytes do not hash to it.
  "GET /api/v1/tasks/[taskId]/artifacts/[sha256]": { allowed: READERS, ok: 404, cross: 404 },
  "GET /api/v1/tasks/[taskId]/artifacts/[sha256]/content": { allowed: READERS, ok: 404, cross: 404 },
  "PUT /api/v1/tasks/[taskId]/artifacts/[sha256]/content": { allowed: RUNTIME, probe: {}, ok: 422, cross: 404 },
  "POST /api/v1/tasks/[taskId]/resume": { allowed: READERS, ok: 200, cross: 404 },
  "POST /api/v1/tasks/[taskId]/side-effects/[name]/intent": {
    allowed: RUNTIME,
    probe: {},
    ok: 400,
    cross: 404,
    crossBody: "intent",
  },
  "POST /api/v1/tasks/[taskId]/side-effects/[name]/receipt": {
    allowed: RUNTIME,
    probe: {},
    ok: 400,
    cross: 404,
    crossBody: "receipt",
  },
  "POST /api/v1/tasks/[taskId]/side-effects/[name]/reconcile": {
    allowed: DECIDERS,
    probe: { outcome: "completed" },
    ok: 422,
    cross: 404,
    crossBody: { outcome: "completed", external_operation_id: "op-matrix", evidence: "ticket MATRIX-1" },
  },
  "POST /api/v1/tasks/[taskId]/side-effects/[name]/lookup": { allowed: DECIDERS, ok: 200, cross: 404 },
  "POST /api/v1/tasks/[taskId]/tool-definitions/[tool]/accept": {
    allowed: APPROVERS,
    probe: {},
    ok: 422,
    cross: 404,
    crossBody: { definition_digest: "a".repeat(64) },
  },
  "GET /api/v1/settings/api-keys": { allowed: PEOPLE, ok: 200, cross: "own" },
  "POST /api/v1/settings/api-keys": { allowed: MANAGERS, probe: {}, ok: 422, cross: "own" },
  // The revoked key's id: this tenant's managers get a conflict (already revoked), another tenant's a 404.
  "POST /api/v1/settings/api-keys/[keyId]/revoke": { allowed: MANAGERS, ok: 409, cross: 404 },
  "GET /api/v1/settings/lookups": { allowed: PEOPLE, ok: 200, cross: "own" },
  "PUT /api/v1/settings/lookups/[tool]": { allowed: MANAGERS, probe: {}, ok: 422, cross: "own" },
  "DELETE /api/v1/settings/lookups/[tool]": { allowed: MANAGERS, ok: 404, cross: "own" },
  "GET /api/v1/settings/members": { allowed: PEOPLE, ok: 200, cross: "own" },
  // The viewer is not locked out: this tenant's managers get a conflict (nothing to unlock), another tenant's a 404.
  "POST /api/v1/settings/members/[userId]/unlock": { allowed: MANAGERS, ok: 409, cross: 404 },
  "GET /api/v1/settings/principals": { allowed: PEOPLE, ok: 200, cross: "own" },
  "POST /api/v1/settings/principals/revoke": { allowed: MANAGERS, probe: {}, ok: 422, cross: "own" },
  "POST /api/v1/settings/principals/restore": { allowed: MANAGERS, probe: {}, ok: 422, cross: "own" },
  "POST /api/v1/settings/members": { allowed: MANAGERS, probe: {}, ok: 422, cross: "own" },
  "PATCH /api/v1/settings/members/[userId]": {
    allowed: MANAGERS,
    probe: { role: "viewer" },
    ok: 404,
    harmless: { userId: NO_SUCH_ID },
    cross: 404,
  },
  "DELETE /api/v1/settings/members/[userId]": {
    allowed: MANAGERS,
    ok: 404,
    harmless: { userId: NO_SUCH_ID },
    cross: 404,
  },
  "POST /api/v1/settings/invitations": { allowed: MANAGERS, probe: {}, ok: 422, cross: "own" },
  "POST /api/v1/invitations/[token]/accept": { allowed: "public", probe: {}, ok: 422, cross: "own" },
  "GET /api/v1/me": { allowed: PEOPLE, ok: 200, cross: "own" },
  // Switching to the workspace the session is already in changes nothing; another tenant's person is no member here.
  "PUT /api/v1/me/workspace": { allowed: PEOPLE, probe: "workspace", ok: 200, cross: 404 },
  "POST /api/v1/me/password": { allowed: PEOPLE, probe: {}, ok: 422, cross: "own" },
  "GET /api/v1/maps": { allowed: PEOPLE, ok: 200, cross: "own" },
  "POST /api/v1/maps": { allowed: MANAGERS, probe: {}, ok: 422, cross: "own" },
  "POST /api/v1/maps/import": { allowed: MANAGERS, probe: {}, ok: 422, cross: "own" },
  "GET /api/v1/maps/[mapId]": { allowed: PEOPLE, ok: 200, cross: 404 },
  // A stale revision: this tenant's editors get a conflict, another tenant's a 404.
  "PATCH /api/v1/maps/[mapId]/layers/[layer]": { allowed: MANAGERS, probe: { revision: 999 }, ok: 409, cross: 404 },
  "POST /api/v1/maps/[mapId]/publish": { allowed: MANAGERS, ok: 404, harmless: { mapId: NO_SUCH_ID }, cross: 404 },
  "GET /api/v1/maps/[mapId]/export": { allowed: PEOPLE, query: "?format=json", ok: 200, cross: 404 },
  // Decision 0046: an empty body is refused before anything is read; another tenant's valid body finds no map.
  "PATCH /api/v1/maps/[mapId]": { allowed: MANAGERS, probe: {}, ok: 422, cross: 404, crossBody: { title: "x" } },
  "POST /api/v1/maps/[mapId]/signoff": {
    allowed: APPROVERS,
    probe: {},
    ok: 422,
    cross: 404,
    crossBody: { version: 1 },
  },
  "POST /api/v1/maps/[mapId]/import": { allowed: MANAGERS, probe: {}, ok: 422, cross: 404, crossBody: MATRIX_MAP_DOC },
  "POST /api/v1/maps/[mapId]/layers/[layer]/evidence": {
    allowed: MANAGERS,
    probe: {},
    ok: 422,
    cross: 404,
    crossBody: { kind: "document", ref: "https://wiki.example.com/runbook" },
  },
  "DELETE /api/v1/maps/[mapId]/layers/[layer]/evidence/[evidenceId]": { allowed: MANAGERS, ok: 404, cross: 404 },
  "PUT /api/v1/maps/[mapId]/layers/[layer]/assignee": {
    allowed: MANAGERS,
    probe: {},
    ok: 422,
    cross: 404,
    crossBody: { assignee: null },
  },
  "POST /api/v1/maps/[mapId]/layers/[layer]/comments": {
    allowed: ["owner", "admin", "approver", "responder"],
    probe: {},
    ok: 422,
    cross: 404,
    crossBody: { text: "matrix" },
  },
  "GET /api/v1/maps/[mapId]/exercises": { allowed: PEOPLE, ok: 200, cross: 404 },
  "POST /api/v1/maps/[mapId]/exercises": {
    allowed: MANAGERS,
    probe: { interruption_point: "" },
    ok: 422,
    cross: 404,
    crossBody: { interruption_point: "after_external_write" },
  },
  "GET /api/v1/maps/[mapId]/exercises/[exerciseId]": { allowed: PEOPLE, ok: 200, cross: 404 },
  "PATCH /api/v1/maps/[mapId]/exercises/[exerciseId]": {
    allowed: MANAGERS,
    probe: { revision: 999 },
    ok: 409,
    cross: 404,
  },
  // The matrix's exercise links no task: building its bundle is refused after the role and tenant checks.
  "POST /api/v1/maps/[mapId]/exercises/[exerciseId]/export": { allowed: MANAGERS, ok: 422, cross: 404 },
  // The workspace bundle: owners and admins only; each tenant exports its own.
  "GET /api/v1/export": { allowed: MANAGERS, ok: 200, cross: "own" },
  "POST /api/v1/maps/[mapId]/exercises/[exerciseId]/complete": {
    allowed: MANAGERS,
    probe: { outcome: "safe_resume", finding: "matrix", revision: 999 },
    ok: 409,
    cross: 404,
  },
  // Approvals: no such request in either tenant; a decision's empty body is refused before anything is read.
  "GET /api/v1/approvals": { allowed: READERS, ok: 200, cross: "own" },
  "GET /api/v1/approvals/[approvalId]": { allowed: READERS, ok: 404, cross: 404 },
  "POST /api/v1/approvals/[approvalId]/decision": {
    allowed: APPROVERS,
    probe: {},
    ok: 422,
    cross: 404,
    crossBody: { decision: "approve", reason: "matrix" },
  },
  // The audit log (decision 0048): people of any role and the tenant's key; another tenant's caller reads its own log.
  "GET /api/v1/audit": { allowed: READERS, ok: 200, cross: "own" },
  "GET /api/v1/audit/export": { allowed: READERS, ok: 200, cross: "own" },
  "GET /api/v1/audit/verify": { allowed: READERS, ok: 200, cross: "own" },
  "GET /api/v1/settings/approvals": { allowed: PEOPLE, ok: 200, cross: "own" },
  "PUT /api/v1/settings/approvals": { allowed: MANAGERS, probe: { default_ttl_seconds: 1 }, ok: 422, cross: "own" },
  "GET /api/v1/settings/retention": { allowed: PEOPLE, ok: 200, cross: "own" },
  "PUT /api/v1/settings/retention": {
    allowed: MANAGERS,
    probe: { event_retention_days: 0, export_before_delete: false },
    ok: 422,
    cross: "own",
  },
  "PUT /api/v1/settings/approval-rules/[action]": { allowed: MANAGERS, probe: {}, ok: 422, cross: "own" },
  // Removing a rule that is not there changes nothing and says so (idempotent).
  "DELETE /api/v1/settings/approval-rules/[action]": { allowed: MANAGERS, ok: 200, cross: "own" },
  // Standard Webhooks (decision 0040): no such source, endpoint or delivery in either tenant; empty bodies are refused.
  "GET /api/v1/settings/webhook-sources": { allowed: PEOPLE, ok: 200, cross: "own" },
  "POST /api/v1/settings/webhook-sources": { allowed: MANAGERS, probe: {}, ok: 422, cross: "own" },
  "PATCH /api/v1/settings/webhook-sources/[source]": { allowed: MANAGERS, probe: {}, ok: 422, cross: "own" },
  "DELETE /api/v1/settings/webhook-sources/[source]": { allowed: MANAGERS, ok: 404, cross: "own" },
  "POST /api/v1/settings/webhook-sources/[source]/secrets": { allowed: MANAGERS, ok: 404, cross: "own" },
  "DELETE /api/v1/settings/webhook-sources/[source]/secrets/[secretId]": { allowed: MANAGERS, ok: 404, cross: "own" },
  // The signature is the credential: without the webhook headers every caller gets 400.
  "POST /api/v1/webhooks/[source]": { allowed: "public", probe: {}, ok: 400, cross: "own" },
  "GET /api/v1/tasks/[taskId]/side-effects/[name]/webhook-reports": { allowed: READERS, ok: 200, cross: 404 },
  "GET /api/v1/tasks/[taskId]/side-effects/[name]/payload": { allowed: READERS, ok: 200, cross: 404 },
  "GET /api/v1/settings/notification-endpoints": { allowed: PEOPLE, ok: 200, cross: "own" },
  "POST /api/v1/settings/notification-endpoints": { allowed: MANAGERS, probe: {}, ok: 422, cross: "own" },
  "DELETE /api/v1/settings/notification-endpoints/[endpointId]": { allowed: MANAGERS, ok: 404, cross: "own" },
  "GET /api/v1/settings/notification-deliveries": { allowed: PEOPLE, ok: 200, cross: "own" },
  "POST /api/v1/settings/notification-deliveries/[deliveryId]/resend": { allowed: MANAGERS, ok: 404, cross: "own" },
  "GET /api/v1/settings/notifications": { allowed: PEOPLE, ok: 200, cross: "own" },
  "PUT /api/v1/settings/notifications": { allowed: MANAGERS, probe: {}, ok: 422, cross: "own" },
  "POST /api/v1/import/openai-agents/run-state": {
    allowed: IMPORTERS,
    query: "?task_id=matrix-no-such-task",
    probe: {},
    ok: 422,
    cross: "own",
  },
  // Policies: a reserved key is refused before anything is stored; no version 1 exists in either tenant.
  "POST /api/v1/policies/lint": { allowed: READERS, probe: {}, ok: 200, cross: "own" },
  "GET /api/v1/policies": { allowed: READERS, ok: 200, cross: "own" },
  "POST /api/v1/policies": { allowed: MANAGERS, probe: { constructor: 1 }, ok: 422, cross: "own" },
  "GET /api/v1/policies/current": { allowed: READERS, ok: 200, cross: "own" },
  "GET /api/v1/policies/[version]": { allowed: READERS, ok: 404, cross: 404 },
  "POST /api/v1/policies/[version]/activate": { allowed: MANAGERS, ok: 404, cross: 404 },
  "GET /api/v1/tasks/[taskId]/egress": { allowed: READERS, ok: 200, cross: 404 },
  "GET /api/v1/tasks/[taskId]/credentials": { allowed: READERS, ok: 200, cross: 404 },
  "POST /api/v1/tasks/[taskId]/credentials/[ref]/revocation-check": { allowed: DECIDERS, ok: 404, cross: 404 },
  // Fencing: this tenant's callers aim at a task that does not exist (nothing moves); another tenant's at this one's.
  "POST /api/v1/tasks/[taskId]/fence": {
    allowed: DECIDERS,
    probe: {},
    ok: 404,
    harmless: { taskId: "matrix-no-such-task" },
    cross: 404,
  },
  // Ending a task: the same (a missing reason would be 422 first; the probe is valid, aimed at no task).
  "POST /api/v1/tasks/[taskId]/terminate": {
    allowed: DECIDERS,
    probe: { reason: "authorization matrix probe" },
    ok: 404,
    harmless: { taskId: "matrix-no-such-task" },
    cross: 404,
  },
  "GET /api/v1/tasks/[taskId]/events": { allowed: READERS, ok: 200, cross: 404 },
  "GET /api/v1/tasks/[taskId]/timeline/overview": { allowed: READERS, ok: 200, cross: 404 },
  "GET /api/v1/tasks/[taskId]/events/[eventId]": { allowed: READERS, ok: 404, cross: 404 },
};

/** The status a caller must get, from the route's row. */
function expectedStatus(cell: Cell, caller: Caller): number {
  if (cell.allowed === "public") return cell.ok;
  if (caller === "no_credentials" || caller === "revoked_key") return 401;
  const kind: Allowed = caller === "other_key" ? "runtime" : caller === "other_session" ? "owner" : caller;
  if (!cell.allowed.includes(kind)) return 403;
  if (caller === "other_key" || caller === "other_session") return cell.cross === "own" ? cell.ok : cell.cross;
  return cell.ok;
}

type World = {
  a: FullTestTenant;
  b: TestTenant;
  auth: Record<Caller, Auth>;
  params: Params;
  /** Strings only tenant A's rows hold: another tenant's caller must never see them. */
  markers: string[];
  intentKey: string;
};

let world: World;

beforeAll(async () => {
  const db = handle.db;
  const a = await createTestTenant(db);
  const b = await createTestTenant(db, { roles: ["owner"] });
  const sessions = Object.fromEntries(
    await Promise.all(PEOPLE.map(async (r) => [r, await signInAs(a, r as never)] as const)),
  ) as Record<string, Auth>;
  const otherSession = await signInAs(b, "owner");
  const owner = sessions.owner;

  const revoked = await api(owner).post<{ id: string; key: string }>("/api/v1/settings/api-keys", {
    name: "matrix revoked",
  });
  expect(revoked.status, revoked.text).toBe(200);
  const rev = await api(owner).post(`/api/v1/settings/api-keys/${revoked.body.id}/revoke`, {});
  expect(rev.status, rev.text).toBe(200);

  const effect = await unknownEffect(db, a);
  await checkpoint(a, newTaskId("matrix-extra"));
  const title = `Matrix map ${rid()}`;
  const map = await api(owner).post<{ id: string }>("/api/v1/maps", { workflow: `matrix-${rid()}`, title });
  expect(map.status, map.text).toBeLessThan(300);
  const ex = await api(owner).post<{ id: string }>(`/api/v1/maps/${map.body.id}/exercises`, {
    interruption_point: "after_intent",
  });
  expect(ex.status, ex.text).toBeLessThan(300);
  const inv = await api(owner).post<{ invitation_url: string }>("/api/v1/settings/invitations", {
    email: `matrix-${rid()}@matrix.test`,
    role: "viewer",
  });
  expect(inv.status, inv.text).toBeLessThan(300);
  const [principal] = [makeRecord(effect.taskId).principal as string];

  world = {
    a,
    b,
    auth: {
      ...(sessions as Record<"owner" | "admin" | "approver" | "responder" | "viewer", Auth>),
      runtime: a.apiKey,
      revoked_key: revoked.body.key,
      no_credentials: undefined,
      other_key: b.apiKey,
      other_session: otherSession,
    },
    params: {
      taskId: effect.taskId,
      name: effect.name,
      tool: "matrix.tool",
      keyId: revoked.body.id,
      userId: a.users.viewer.userId,
      mapId: map.body.id,
      exerciseId: ex.body.id,
      layer: "tools",
      token: inv.body.invitation_url.split("/").pop() ?? "",
      approvalId: NO_SUCH_ID,
      version: "1",
      ref: "matrix-credential",
      action: "matrix_action",
      eventId: "matrix-no-such-event",
      source: "matrix-no-such-source",
      secretId: NO_SUCH_ID,
      endpointId: NO_SUCH_ID,
      deliveryId: `msg_${"0".repeat(32)}`,
      evidenceId: NO_SUCH_ID,
      sha256: "0".repeat(64),
    },
    markers: [
      a.tenantId,
      a.slug,
      ...Object.values(a.users).flatMap((u) => [u.email, u.userId]),
      effect.taskId,
      effect.key,
      map.body.id,
      ex.body.id,
      title,
      revoked.body.id,
    ].filter((m) => m !== principal),
    intentKey: newKey("matrix"),
  };
}, 120_000);

function bodyOf(spec: unknown, w: World): unknown {
  if (spec === "workspace") return { workspace: w.a.slug };
  if (spec === "intent") return intentBody(w.intentKey);
  if (spec === "receipt") return receiptBody(w.intentKey);
  return spec;
}

/** One cell's request: the caller's credentials, harmless parameters for this tenant, the cross body for another. */
type CellCall = RouteCall & { caller: Caller; expected: number };

function cellCall(route: string, cell: Cell, caller: Caller): CellCall {
  const cross = caller === "other_key" || caller === "other_session";
  const params = cross ? world.params : { ...world.params, ...(cell.harmless ?? {}) };
  const spec = cross && cell.crossBody !== undefined ? cell.crossBody : cell.probe;
  return {
    route,
    caller,
    expected: expectedStatus(cell, caller),
    auth: world.auth[caller],
    params,
    query: cell.query,
    body: bodyOf(spec, world),
  };
}

describe("authorization matrix", () => {
  it("has one row per route of the registry, and the registry names every route file's methods", () => {
    expect(
      Object.keys(API_ROUTES).filter((r) => !(r in MATRIX)),
      "routes without a matrix row",
    ).toEqual([]);
    expect(
      Object.keys(MATRIX).filter((r) => !(r in API_ROUTES)),
      "matrix rows for routes that are gone",
    ).toEqual([]);
    expect(
      routeFileMethods().filter((r) => !(r in API_ROUTES)),
      "route files missing from tests/support/api-routes.ts",
    ).toEqual([]);
  });

  it("answers every route × caller cell with its expected status, and shows another tenant nothing of this one", async () => {
    // Writes that would change what later cells see go last: the cells that change state are the ones listed
    // with harmless parameters or stale bodies, so every cell can run in any order.
    const calls = Object.entries(MATRIX)
      .filter(([route]) => route in API_ROUTES)
      .flatMap(([route, cell]) => CALLERS.map((caller) => cellCall(route, cell, caller)));
    const results = await walkRoutes(calls, 8);
    const wrong = results
      .filter((r) => r.status !== r.call.expected)
      .map(
        (r) =>
          `${r.call.route} as ${r.call.caller}: expected ${r.call.expected}, got ${r.status} ${r.text.slice(0, 300)}`,
      );
    // Another tenant's caller must see nothing of this tenant that its request did not itself name.
    const leaks = results.flatMap((r) => {
      if (r.call.caller !== "other_key" && r.call.caller !== "other_session") return [];
      const sent = r.url + JSON.stringify(r.call.body ?? null);
      const leaked = world.markers.filter((m) => !sent.includes(m) && r.text.includes(m));
      return leaked.length
        ? [`${r.call.route} as ${r.call.caller} showed ${leaked.join(", ")}: ${r.text.slice(0, 300)}`]
        : [];
    });
    expect(wrong).toEqual([]);
    expect(leaks).toEqual([]);
    expect(results.length).toBe(Object.keys(MATRIX).length * CALLERS.length);

    // Nothing of tenant A changed under another tenant's calls: its viewer is still a viewer, its map is a draft.
    const [member] = await queryRows<{ role: string; revoked: boolean }>(
      handle.db,
      sql`select role, revoked_at is not null as revoked from memberships where tenant_id = ${world.a.tenantId} and user_id = ${world.a.users.viewer.userId}`,
    );
    expect(member).toEqual({ role: "viewer", revoked: false });
    const [map] = await queryRows<{ status: string }>(
      handle.db,
      sql`select status from custody_maps where tenant_id = ${world.a.tenantId} and id = ${world.params.mapId}`,
    );
    expect(map?.status).toBe("draft");
    const [effect] = await queryRows<{ status: string }>(
      handle.db,
      sql`select status from side_effects where tenant_id = ${world.a.tenantId} and task_id = ${world.params.taskId} and name = ${world.params.name}`,
    );
    expect(effect?.status).toBe("unknown");
  }, 180_000);
});
