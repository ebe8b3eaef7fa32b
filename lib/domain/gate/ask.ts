/**
 * `POST /api/v1/tasks/{task_id}/resume`: gathers the stored facts of a task and asks the pure gate
 * ({@link evaluateGate}). Reads only (apart from the lazy lease-expiry transition).
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { expireLeases, listSideEffects } from "@/db/queries/side-effects";
import { isoUtc } from "@/db/queries/sql-helpers";
import { findTask, latestCheckpoint, listCheckpoints, type CheckpointRow } from "@/db/queries/tasks";
import type { GateVerdict } from "@/lib/client/types";
import { authorize, type Actor } from "../authz";
import type { SigningKey } from "../crypto/signing";
import { notFound, validationError } from "../errors";
import { checkpointVerifies, checkTaskId } from "../tasks/read";
import { evaluateGate, type GateCheckpoint, type GateFacts } from "./evaluate";
import { recordGateAsk } from "./asks";
import { gatherApprovalFacts } from "../approvals/gate";

export const resumeBodySchema = z.strictObject({
  /** Tool name → sha256 of the definition the runtime would resume with. */
  tool_definitions: z.record(z.string().min(1).max(200), z.string().regex(/^[a-f0-9]{64}$/, "must be a lower-case hex sha256")).optional(),
  /** The sandbox attempt asking (a live intent of an older attempt then holds new writes back). */
  attempt: z.number().int("attempt must be a whole number").min(1, "attempt starts at 1").max(1_000_000).optional(),
});

type GateEventRow = {
  event_id: string;
  type: string;
  occurred_at: string;
  received_at: string;
  attempt: number | null;
  attrs: Record<string, unknown>;
};

const GATE_EVENT_TYPES = [
  "sandbox.created",
  "snapshot.saved",
  "snapshot.restored",
  "credential.issued",
  "credential.revoked",
  "credential.expired",
  "tool.definition_changed",
];

const str = (v: unknown): string | null => (typeof v === "string" && v ? v : null);

/**
 * Collects the facts the gate needs from the database (the same facts for `POST /resume` and for deciding an intent).
 * @param askingAttempt the attempt asking, when the request names one.
 * @param opts.forWrite read only the side effects that can block or hold back a write (an intent's decision does not
 *   need the list of permitted effects).
 * @throws DomainError not_found when the tenant has no such task.
 */
export async function gatherGateFacts(
  db: Db,
  tenantId: string,
  taskId: string,
  key: SigningKey,
  toolDefinitions: Record<string, string> = {},
  now = new Date(),
  askingAttempt: number | null = null,
  opts: { forWrite?: boolean } = {},
): Promise<GateFacts> {
  const task = await findTask(db, tenantId, taskId);
  if (!task) throw notFound(`Task ${taskId}`);
  await expireLeases(db, tenantId, taskId);
  const [checkpoint, effects, revocations, events] = await Promise.all([
    latestCheckpoint(db, tenantId, taskId),
    // Deciding a write reads only the effects that can block or hold it back; the full list serves `permitted`.
    listSideEffects(db, tenantId, taskId, opts.forWrite ? { statuses: ["unknown", "in_flight", "awaiting_approval"] } : {}),
    task.principal
      ? queryRows<{ principal: string; reason: string; revoked_at: string }>(
          db,
          sql`select principal, reason, ${isoUtc("revoked_at")} as revoked_at from principal_revocations
              where tenant_id = ${tenantId} and principal = ${task.principal}`,
        )
      : Promise.resolve([]),
    queryRows<GateEventRow>(
      db,
      sql`select event_id, type, ${isoUtc("occurred_at")} as occurred_at, ${isoUtc("received_at")} as received_at, attempt, attrs from events
          where tenant_id = ${tenantId} and task_id = ${taskId}
            and type in (${sql.join(GATE_EVENT_TYPES.map((t) => sql`${t}`), sql`, `)})
          order by occurred_at, event_id`,
    ),
  ]);

  // Snapshots: restores count for the current attempt (or, without attempts, since the last sandbox start).
  const lastSandboxStart = [...events].reverse().find((e) => e.type === "sandbox.created")?.occurred_at ?? null;
  const snapshots_saved = events.filter((e) => e.type === "snapshot.saved").map((e) => str(e.attrs.digest)).filter((d): d is string => !!d);
  const snapshots_restored = events
    .filter((e) => e.type === "snapshot.restored")
    .filter((e) =>
      e.attempt !== null
        ? e.attempt === task.current_attempt || task.current_attempt === 0
        : lastSandboxStart === null || e.occurred_at >= lastSandboxStart,
    )
    .map((e) => ({ event_id: e.event_id, digest: str(e.attrs.digest), snapshot_id: str(e.attrs.snapshot_id) }));

  // Credentials: the latest issued instance per credential_ref, and whether it was revoked or expired since.
  const latestCredential = new Map<string, GateFacts["credentials"][number] & { issued_at: string }>();
  const refById = new Map<string, string>();
  for (const e of events) {
    const id = str(e.attrs.credential_id);
    // A revocation may name only the instance: find its credential_ref from the issue event.
    const ref = str(e.attrs.credential_ref) ?? (id ? refById.get(id) : undefined) ?? id;
    if (!ref) continue;
    if (id && e.type === "credential.issued") refById.set(id, ref);
    if (e.type === "credential.issued") {
      latestCredential.set(ref, { credential_ref: ref, credential_id: id, revoked_at: null, expired_at: null, expires_at: str(e.attrs.expires_at), issued_at: e.occurred_at });
      continue;
    }
    const cur = latestCredential.get(ref);
    const sameInstance = cur && (!id || !cur.credential_id || id === cur.credential_id);
    if (e.type === "credential.revoked") {
      if (cur && sameInstance) cur.revoked_at = e.occurred_at;
      else if (!cur) latestCredential.set(ref, { credential_ref: ref, credential_id: id, revoked_at: e.occurred_at, expired_at: null, expires_at: null, issued_at: e.occurred_at });
    } else if (e.type === "credential.expired") {
      if (cur && sameInstance) cur.expired_at = e.occurred_at;
      else if (!cur) latestCredential.set(ref, { credential_ref: ref, credential_id: id, revoked_at: null, expired_at: e.occurred_at, expires_at: null, issued_at: e.occurred_at });
    }
  }

  // Approvals and the policy version (issue 8): the same standing the intent route answers for its own effect.
  const approvalFacts = await gatherApprovalFacts(
    db,
    tenantId,
    taskId,
    effects.filter((e) => e.status === "awaiting_approval").map((e) => e.name),
    now,
  );

  const latest = checkpoint ? gateCheckpoint(checkpoint, key) : null;
  const verified = latest === null || latest.signature_valid ? latest : await latestVerified(db, tenantId, taskId, key);

  // Tool definitions now: changes the server received after the checkpoint to resume from (server clock against server
  // clock, never the runtime's), then what the runtime says in this request.
  const fromEvents: Record<string, string> = {};
  for (const e of events) {
    if (e.type !== "tool.definition_changed") continue;
    if (verified && e.received_at < verified.created_at) continue;
    const tool = str(e.attrs.tool) ?? str(e.attrs.name);
    const digest = str(e.attrs.definition_digest) ?? str(e.attrs.digest);
    if (tool && digest) fromEvents[tool] = digest;
  }

  return {
    now,
    task: { task_id: task.task_id, phase: task.phase, principal: task.principal, current_attempt: task.current_attempt },
    checkpoint: latest,
    verified_checkpoint: verified,
    asking_attempt: askingAttempt,
    principal_revocation: revocations[0] ?? null,
    side_effects: effects.map((e) => ({
      name: e.name,
      status: e.status,
      status_reason: e.status_reason,
      lease_expires_at: e.lease_expires_at,
      intent_attempt: e.intent_attempt,
    })),
    snapshots_saved,
    snapshots_restored,
    credentials: [...latestCredential.values()].map(({ issued_at: _issued, ...c }) => c),
    tool_definitions_now: { ...fromEvents, ...toolDefinitions },
    approvals: approvalFacts.approvals,
    policy: approvalFacts.policy,
  };
}

/** A stored checkpoint as the gate reads it, with its signature checked. */
function gateCheckpoint(c: CheckpointRow, key: SigningKey): GateCheckpoint {
  const record = c.record as { phase?: unknown; tool_definitions?: Record<string, string> };
  return {
    version: c.version,
    phase: typeof record.phase === "string" ? record.phase : "start",
    signature_valid: checkpointVerifies(c, key),
    created_at: c.created_at,
    tool_definitions: record.tool_definitions ?? null,
  };
}

/** The newest checkpoint whose signature verifies (only read when the latest does not). */
async function latestVerified(db: Db, tenantId: string, taskId: string, key: SigningKey): Promise<GateCheckpoint | null> {
  for (const c of await listCheckpoints(db, tenantId, taskId, { limit: 200 })) {
    const g = gateCheckpoint(c, key);
    if (g.signature_valid) return g;
  }
  return null;
}

/**
 * Asks the resume gate for a task.
 * @param body optional `{tool_definitions?: {name: sha256}, attempt?: number}` — the tools the runtime would resume with
 *   and the attempt asking.
 * @returns `{verdict, reasons: [{code, message, target}], next_phase, permitted_side_effects}`.
 * @throws DomainError not_found, validation_failed, forbidden.
 */
export async function askGate(db: Db, actor: Actor, taskId: string, body: unknown, key: SigningKey): Promise<GateVerdict> {
  authorize(actor, "gate.ask");
  checkTaskId(taskId);
  const parsed = resumeBodySchema.safeParse(body ?? {});
  if (!parsed.success) throw validationError(parsed.error.issues);
  const facts = await gatherGateFacts(db, actor.tenantId, taskId, key, parsed.data.tool_definitions ?? {}, new Date(), parsed.data.attempt ?? null);
  return recordGateAsk(db, actor, facts.task, evaluateGate(facts));
}
