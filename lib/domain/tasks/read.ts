/**
 * Read verbs for tasks: list, one task's view, timeline, checkpoint history, artifacts.
 * Each authorizes first and scopes by the actor's tenant; a task of another tenant is `not_found`.
 */
import { createPublicKey } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { decodeCursor, encodeCursor } from "@/db/queries/sql-helpers";
import { listSideEffects, type SideEffectRow } from "@/db/queries/side-effects";
import * as q from "@/db/queries/tasks";
import { timelineWindow } from "@/db/queries/timeline";
import type {
  WriteApproval,
  ArtifactView,
  CheckpointPage,
  CheckpointSummary,
  SideEffectView,
  StoredEvent,
  TaskRecord,
  TaskView,
  TimelinePage,
} from "@/lib/contract/api";
import { databaseArtifactStore } from "../artifacts/artifact-store";
import { authorize } from "../authz";
import type { SigningKey } from "../crypto/signing";
import { DomainError, notFound } from "../errors";
import { findLiveTask } from "./deleted";
import { listGateAsks } from "../gate/asks";
import { liveRequests, standingsOf } from "../approvals/gate";
import { writeApprovalOf } from "../approvals/write-state";
import { checkCheckpoint, placedCheck, type CheckpointPlace, type VerificationKey } from "./signatures";
import { TASK_ID_PATTERN } from "../events/schema";
import { expireLeasesNow } from "../side-effects/lifecycle/lease";
import { listUnappliedReceipts, type UnappliedReceiptRow } from "../side-effects/receipts";
import type { SigningContext, VerbContext } from "../context";

const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** Decodes a keyset cursor `[time, id]` made by this module. @throws DomainError bad_request when it is not one. */
export function timeCursor(cursor: string): { at: string; id: string } {
  const parts = decodeCursor(cursor, 2);
  const [at, id] = parts ?? [];
  if (
    typeof at !== "string" ||
    !CURSOR_TIME.test(at) ||
    Number.isNaN(Date.parse(at)) ||
    typeof id !== "string" ||
    id.length > 200
  ) {
    throw new DomainError("bad_request", "cursor is not valid; start again without it.");
  }
  return { at, id };
}

/** Task ids that cannot exist are not looked up (and never echoed back at length). @throws DomainError not_found */
export function checkTaskId(taskId: string): void {
  if (!TASK_ID_PATTERN.test(taskId)) throw new DomainError("not_found", "That task was not found.");
}

export { DEFAULT_PAGE, MAX_PAGE, pageSize } from "../page-size";

/** A search filter's value, trimmed; absent when empty. @throws DomainError bad_request over 400 characters. */
export function filterText(name: string, raw: string | null | undefined): string | undefined {
  const v = raw?.trim();
  if (!v) return undefined;
  if (v.length > 400) throw new DomainError("bad_request", `${name} is at most 400 characters.`);
  return v;
}

/**
 * Shapes a side-effect row for the API (receipt only when present), with the receipts kept for it and its live
 * approval request's state (lib/domain/approvals/write-state.ts).
 */
export function sideEffectView(
  r: SideEffectRow,
  unapplied: UnappliedReceiptRow[] = [],
  approval: WriteApproval | null = null,
): SideEffectView {
  return {
    idempotency_key: r.idempotency_key,
    status: r.status,
    approval,
    ...(r.receipt ? { receipt: r.receipt } : {}),
    origin: r.origin,
    call_id: r.call_id,
    intent_attempt: r.intent_attempt,
    unapplied_receipts: unapplied,
    tool: r.tool,
    action: r.action,
    mutation: r.mutation,
    payload_digest: r.payload_digest,
    status_reason: r.status_reason,
    intent_at: r.intent_at,
    lease_expires_at: r.lease_expires_at,
    last_reconcile: r.last_reconcile
      ? {
          outcome: r.last_reconcile.outcome,
          evidence: r.last_reconcile.evidence,
          external_operation_id: r.last_reconcile.external_operation_id ?? null,
          by: r.last_reconcile.by,
          at: r.last_reconcile.at,
        }
      : null,
    last_not_applied: r.last_not_applied ?? null,
    repeats: r.repeats,
    updated_at: r.updated_at,
  };
}

/**
 * The latest record, whether its signature verifies, and the server's view of each side effect.
 * @param opts.eventCount the task's event count when the caller has it already (the task page: its timeline overview
 *   counts every event, so the view need not count them a second time); else counted here.
 * @throws DomainError not_found when the tenant has no such task.
 */
export async function getTaskView(
  { db, actor, signingKey: key }: SigningContext,
  { taskId, ...opts }: { taskId: string; eventCount?: Promise<number> },
): Promise<TaskView> {
  authorize(actor, "tasks.read");
  checkTaskId(taskId);
  // All at once (one round of statements, the side effects after their lease expiry): every read is scoped to the
  // tenant and task, so for a task that does not exist they find nothing and the expiry changes nothing.
  const [task, [effects, standings], checkpoint, eventCount, unapplied, gateAsks] = await Promise.all([
    findLiveTask(db, actor.tenantId, taskId),
    // The side effects, then their live approval requests read as the gate reads them (one state per write).
    expireLeasesNow(db, actor.tenantId, taskId).then(() =>
      Promise.all([
        listSideEffects(db, actor.tenantId, taskId),
        liveRequests(db, actor.tenantId, taskId).then((rows) => standingsOf(db, key, actor.tenantId, rows)),
      ]),
    ),
    q.latestCheckpoint(db, actor.tenantId, taskId),
    opts.eventCount ?? q.countEvents(db, actor.tenantId, taskId),
    listUnappliedReceipts(db, actor.tenantId, taskId),
    listGateAsks(db, actor.tenantId, taskId),
  ]);
  if (!task) throw notFound(`Task ${taskId}`);
  // The gate's placement rules (decision 0035): the latest row is the newest one.
  const keys = checkpoint ? await verificationKeys(db, actor.tenantId, key, [checkpoint]) : null;
  const check = checkpoint
    ? placedCheck(checkCheckpoint(checkpoint, keys!(checkpoint.key_id), { tenantId: actor.tenantId, taskId }), {
        version: checkpoint.version,
        downgraded: checkpoint.downgraded,
        newest: true,
        taskLatestVersion: task.latest_version,
      })
    : null;
  const side_effects: Record<string, SideEffectView> = {};
  const approvalOf = new Map(standings.map(({ row, standing }) => [row.side_effect, writeApprovalOf(standing, row)]));
  for (const e of effects)
    side_effects[e.name] = sideEffectView(e, unapplied.get(e.name) ?? [], approvalOf.get(e.name) ?? null);
  return {
    task_id: task.task_id,
    record: (checkpoint?.record as TaskRecord | undefined) ?? null,
    version: checkpoint?.version ?? 0,
    digest: checkpoint?.digest ?? null,
    signature: checkpoint?.signature ?? null,
    key_id: checkpoint?.key_id ?? null,
    signature_valid: check === null ? null : check === "valid",
    signature_check: check,
    principal: task.principal,
    phase: task.phase,
    policy_version: task.policy_version,
    current_attempt: task.current_attempt,
    clock_skew:
      task.clock_skew_ms !== null && task.clock_skew_at
        ? { ms: Number(task.clock_skew_ms), detected_at: task.clock_skew_at, note: task.clock_skew_note ?? "" }
        : null,
    terminated: task.terminated_at
      ? { at: task.terminated_at, by: task.terminated_by ?? "someone", reason: task.terminated_reason ?? "" }
      : null,
    created_at: task.created_at,
    event_count: eventCount,
    side_effects,
    gate_asks: gateAsks,
  };
}

/**
 * A page of the task's events in time order (occurred_at, id), keyset-paginated; with `from` / `to` (ISO instants,
 * inclusive) only that window of time (the timeline's detail on zoom). Time order is for reading a run; readers that
 * follow a task as it grows use the arrival feed (`getArrivalFeed`), which never misses a back-dated event.
 * @throws DomainError not_found, bad_request (cursor, from, to).
 */
export async function getTimeline(
  { db, actor }: VerbContext,
  {
    taskId,
    ...opts
  }: {
    taskId: string;
    cursor?: string | null;
    limit?: number;
    from?: string | null;
    to?: string | null;
    /** `summary`: large bodies are cut in the database (db/queries/tasks.ts `EVENT_SUMMARY_COLUMNS`, decision 0036). */
    columns?: q.EventColumns;
  },
): Promise<TimelinePage> {
  authorize(actor, "tasks.read");
  checkTaskId(taskId);
  const limit = opts.limit ?? 200;
  let after: { occurredAt: string; eventId: string } | undefined;
  if (opts.cursor) {
    const c = timeCursor(opts.cursor);
    after = { occurredAt: c.at, eventId: c.id };
  }
  let window: { from: string; to: string } | null = null;
  if (opts.from || opts.to) {
    const from = opts.from ? parseInstant(opts.from, "from") : "-infinity";
    const to = opts.to ? parseInstant(opts.to, "to") : "infinity";
    if (opts.from && opts.to && Date.parse(from) > Date.parse(to)) {
      throw new DomainError("bad_request", "from must not be after to.", {
        fields: [{ path: "from", message: "not after to" }],
      });
    }
    window = { from, to };
  }
  // The task and its page in one round (the page of a task that does not exist is empty, and is not answered).
  const [task, rows] = await Promise.all([
    findLiveTask(db, actor.tenantId, taskId),
    window
      ? timelineWindow(db, actor.tenantId, taskId, { ...window, limit: limit + 1, after, columns: opts.columns })
      : q.timelinePage(db, actor.tenantId, taskId, { limit: limit + 1, after, columns: opts.columns }),
  ]);
  if (!task) throw notFound(`Task ${taskId}`);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    events: page.map(storedEvent),
    next_cursor: rows.length > limit && last ? encodeCursor([last.occurred_at, last.event_id]) : null,
  };
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;

/** Checks an ISO 8601 instant given as parameter `name` and returns it. @throws DomainError bad_request naming it. */
export function parseInstant(raw: string, name: string): string {
  if (!ISO_INSTANT.test(raw) || Number.isNaN(Date.parse(raw))) {
    throw new DomainError("bad_request", `${name} must be an ISO 8601 time with offset, e.g. 2026-01-01T00:00:00Z.`, {
      fields: [{ path: name, message: "ISO 8601 time with offset" }],
    });
  }
  return raw;
}

/** Shapes an event row for the API. */
export function storedEvent(r: q.EventRow): StoredEvent {
  return {
    id: r.event_id,
    task_id: r.task_id,
    plane: r.plane,
    type: r.type,
    occurred_at: r.occurred_at,
    received_at: r.received_at,
    environment_id: r.environment_id,
    attempt: r.attempt,
    actor: r.actor,
    attrs: r.attrs,
    redaction_count: r.redaction_count,
    redaction_kinds: r.redaction_kinds ?? [],
    credential_flagged: r.plane === "vault" && r.redaction_count > 0,
    // Cut in the database (a summary read, decision 0036): the drawer fetches the detail.
    ...(r.attrs_cut ? { attrs_truncated: true } : {}),
  };
}

export const DEFAULT_CHECKPOINT_PAGE = 50;
export const MAX_CHECKPOINT_PAGE = 200;

/**
 * Checkpoint history, newest first, each with its signature, key id and signature check; keyset-paginated by version.
 * @param opts.cursor `next_cursor` of the previous page; `limit` 1–200 (default 50).
 * @returns `{checkpoints, next_cursor}` (null on the last page).
 * @throws DomainError not_found, bad_request (cursor).
 */
export async function getCheckpointHistory(
  { db, actor, signingKey: key }: SigningContext,
  { taskId, ...opts }: { taskId: string; cursor?: string | null; limit?: number },
): Promise<CheckpointPage> {
  authorize(actor, "tasks.read");
  checkTaskId(taskId);
  const task = await findLiveTask(db, actor.tenantId, taskId);
  if (!task) throw notFound(`Task ${taskId}`);
  const limit = opts.limit ?? DEFAULT_CHECKPOINT_PAGE;
  let beforeVersion: number | undefined;
  if (opts.cursor) {
    const [v] = decodeCursor(opts.cursor, 1) ?? [];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1)
      throw new DomainError("bad_request", "cursor is not valid; start again without it.");
    beforeVersion = v;
  }
  const rows = await q.listCheckpoints(db, actor.tenantId, taskId, { limit: limit + 1, beforeVersion });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const keys = await verificationKeys(db, actor.tenantId, key, page);
  return {
    checkpoints: page.map((c, i) =>
      checkpointSummary(
        c,
        keys(c.key_id),
        { tenantId: actor.tenantId, taskId },
        {
          version: c.version,
          downgraded: c.downgraded,
          // The first row of the first page is the task's newest stored row.
          newest: !opts.cursor && i === 0,
          taskLatestVersion: task.latest_version,
        },
      ),
    ),
    next_cursor: rows.length > limit && last ? encodeCursor([last.version]) : null,
  };
}

/** One row of the history, checked in its place by the gate's rules ({@link placedCheck}). */
function checkpointSummary(
  c: q.CheckpointRow,
  key: VerificationKey,
  at: { tenantId: string; taskId: string },
  place: CheckpointPlace,
): CheckpointSummary & { record: TaskRecord } {
  const check = placedCheck(checkCheckpoint(c, key, at), place);
  return {
    version: c.version,
    digest: c.digest,
    signature: c.signature,
    key_id: c.key_id,
    attempt: c.attempt,
    signature_valid: check === "valid",
    signature_check: check,
    phase: String((c.record as { phase?: unknown }).phase ?? ""),
    created_at: c.created_at,
    record: c.record as TaskRecord,
  };
}

/**
 * Artifacts of a task (object ref, sha256, size, media type, and whether their bytes were uploaded and still hash to
 * the digest: `content` stored, missing or mismatch). @throws DomainError not_found
 */
export async function getArtifacts(
  { db, actor }: VerbContext,
  { taskId }: { taskId: string },
): Promise<ArtifactView[]> {
  authorize(actor, "tasks.read");
  checkTaskId(taskId);
  const task = await findLiveTask(db, actor.tenantId, taskId);
  if (!task) throw notFound(`Task ${taskId}`);
  const rows = await q.listArtifacts(db, actor.tenantId, taskId);
  // Whether each one's bytes were uploaded and still hash to its digest (decision 0045), hashed in the store.
  const stored = await databaseArtifactStore(db).has(
    actor.tenantId,
    rows.map((a) => a.sha256),
  );
  return rows.map((a) => ({
    ref: a.object_ref,
    sha256: a.sha256,
    size: a.size_bytes === null ? null : Number(a.size_bytes),
    media_type: a.media_type,
    first_version: a.first_version,
    created_at: a.created_at,
    content: !stored.has(a.sha256) ? "missing" : stored.get(a.sha256)!.intact ? "stored" : "mismatch",
  }));
}

/**
 * The key each checkpoint is checked with in the views: the server's own, or, in a workspace restored from a bundle
 * (decision 0038), the public key of the server that signed it, kept with the workspace at import
 * (`tenants.imported_from.keys`, JWKs). Read only when a row names a key id other than the server's. A key id found
 * nowhere gets the server's key, so the row shows as not verifying.
 */
async function verificationKeys(
  db: Db,
  tenantId: string,
  key: SigningKey,
  rows: ReadonlyArray<{ key_id: string }>,
): Promise<(kid: string) => VerificationKey> {
  if (rows.every((r) => r.key_id === key.kid)) return () => key;
  const [row] = await queryRows<{ keys: unknown }>(
    db,
    sql`select imported_from -> 'keys' as keys from tenants where id = ${tenantId}`,
  );
  const imported = new Map<string, VerificationKey>();
  for (const jwk of Array.isArray(row?.keys) ? row.keys : []) {
    const j = jwk as { kid?: unknown; kty?: unknown; crv?: unknown; x?: unknown };
    if (typeof j.kid !== "string" || j.kty !== "OKP" || j.crv !== "Ed25519" || typeof j.x !== "string") continue;
    try {
      imported.set(j.kid, {
        kid: j.kid,
        publicKey: createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: j.x }, format: "jwk" }),
      });
    } catch {
      // A key that does not parse verifies nothing.
    }
  }
  return (kid) => (kid === key.kid ? key : (imported.get(kid) ?? key));
}
