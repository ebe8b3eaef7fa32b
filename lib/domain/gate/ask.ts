/**
 * `POST /api/v1/tasks/{task_id}/resume`: gathers the stored facts of a task and asks the pure gate
 * ({@link evaluateGate}). Reads only (apart from the lazy lease-expiry transition).
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { expireLeases, listSideEffects } from "@/db/queries/side-effects";
import { isoUtc } from "@/db/queries/sql-helpers";
import { findTask, latestCheckpoint } from "@/db/queries/tasks";
import type { GateVerdict } from "@/lib/client/types";
import { authorize, type Actor } from "../authz";
import type { SigningKey } from "../crypto/signing";
import { notFound, validationError } from "../errors";
import { checkpointVerifies, checkTaskId } from "../tasks/read";
import { recordGateAsk } from "./asks";
import { evaluateGate, type GateFacts } from "./evaluate";

export const resumeBodySchema = z.strictObject({
  /** Tool name → sha256 of the definition the runtime would resume with. */
  tool_definitions: z.record(z.string().min(1).max(200), z.string().regex(/^[a-f0-9]{64}$/, "must be a lower-case hex sha256")).optional(),
});

type GateEventRow = {
  event_id: string;
  type: string;
  occurred_at: string;
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
 * Collects the facts the gate needs from the database.
 * @throws DomainError not_found when the tenant has no such task.
 */
export async function gatherGateFacts(
  db: Db,
  tenantId: string,
  taskId: string,
  key: SigningKey,
  toolDefinitions: Record<string, string> = {},
  now = new Date(),
): Promise<GateFacts> {
  const task = await findTask(db, tenantId, taskId);
  if (!task) throw notFound(`Task ${taskId}`);
  await expireLeases(db, tenantId, taskId);
  const [checkpoint, effects, revocations, events] = await Promise.all([
    latestCheckpoint(db, tenantId, taskId),
    listSideEffects(db, tenantId, taskId),
    task.principal
      ? queryRows<{ principal: string; reason: string; revoked_at: string }>(
          db,
          sql`select principal, reason, ${isoUtc("revoked_at")} as revoked_at from principal_revocations
              where tenant_id = ${tenantId} and principal = ${task.principal}`,
        )
      : Promise.resolve([]),
    queryRows<GateEventRow>(
      db,
      sql`select event_id, type, ${isoUtc("occurred_at")} as occurred_at, attempt, attrs from events
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
  const latest = new Map<string, GateFacts["credentials"][number] & { issued_at: string }>();
  const refById = new Map<string, string>();
  for (const e of events) {
    const id = str(e.attrs.credential_id);
    // A revocation may name only the instance: find its credential_ref from the issue event.
    const ref = str(e.attrs.credential_ref) ?? (id ? refById.get(id) : undefined) ?? id;
    if (!ref) continue;
    if (id && e.type === "credential.issued") refById.set(id, ref);
    if (e.type === "credential.issued") {
      latest.set(ref, { credential_ref: ref, credential_id: id, revoked_at: null, expired_at: null, expires_at: str(e.attrs.expires_at), issued_at: e.occurred_at });
      continue;
    }
    const cur = latest.get(ref);
    const sameInstance = cur && (!id || !cur.credential_id || id === cur.credential_id);
    if (e.type === "credential.revoked") {
      if (cur && sameInstance) cur.revoked_at = e.occurred_at;
      else if (!cur) latest.set(ref, { credential_ref: ref, credential_id: id, revoked_at: e.occurred_at, expired_at: null, expires_at: null, issued_at: e.occurred_at });
    } else if (e.type === "credential.expired") {
      if (cur && sameInstance) cur.expired_at = e.occurred_at;
      else if (!cur) latest.set(ref, { credential_ref: ref, credential_id: id, revoked_at: null, expired_at: e.occurred_at, expires_at: null, issued_at: e.occurred_at });
    }
  }

  // Tool definitions now: changes reported after the checkpoint, then what the runtime says in this request.
  const fromEvents: Record<string, string> = {};
  for (const e of events) {
    if (e.type !== "tool.definition_changed") continue;
    if (checkpoint && e.occurred_at < checkpoint.created_at) continue;
    const tool = str(e.attrs.tool) ?? str(e.attrs.name);
    const digest = str(e.attrs.definition_digest) ?? str(e.attrs.digest);
    if (tool && digest) fromEvents[tool] = digest;
  }

  const record = checkpoint?.record as { phase?: string; tool_definitions?: Record<string, string> } | undefined;
  return {
    now,
    task: { task_id: task.task_id, phase: task.phase, principal: task.principal, current_attempt: task.current_attempt },
    checkpoint: checkpoint
      ? {
          version: checkpoint.version,
          phase: record?.phase ?? task.phase,
          signature_valid: checkpointVerifies(checkpoint, key),
          created_at: checkpoint.created_at,
          tool_definitions: record?.tool_definitions ?? null,
        }
      : null,
    principal_revocation: revocations[0] ?? null,
    side_effects: effects.map((e) => ({ name: e.name, status: e.status, status_reason: e.status_reason, lease_expires_at: e.lease_expires_at })),
    snapshots_saved,
    snapshots_restored,
    credentials: [...latest.values()].map(({ issued_at: _issued, ...c }) => c),
    tool_definitions_now: { ...fromEvents, ...toolDefinitions },
  };
}

/**
 * Asks the resume gate for a task.
 * @param body optional `{tool_definitions?: {name: sha256}}` — the tools the runtime would resume with.
 * @returns `{verdict, reasons: [{code, message, target}], next_phase, permitted_side_effects}`.
 * @throws DomainError not_found, validation_failed, forbidden.
 */
export async function askGate(db: Db, actor: Actor, taskId: string, body: unknown, key: SigningKey): Promise<GateVerdict> {
  authorize(actor, "gate.ask");
  checkTaskId(taskId);
  const parsed = resumeBodySchema.safeParse(body ?? {});
  if (!parsed.success) throw validationError(parsed.error.issues);
  const facts = await gatherGateFacts(db, actor.tenantId, taskId, key, parsed.data.tool_definitions ?? {});
  return recordGateAsk(db, actor, facts.task, evaluateGate(facts));
}
