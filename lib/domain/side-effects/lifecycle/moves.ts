/**
 * Who moves side effects, and the audit entries of the moves the lifecycle audits itself (transitions.ts `own`).
 *
 * A {@link Mover} names the actor and the cause of the moves a piece of work makes, and carries the journal their
 * entries wait in: the statements record each moved effect there, and {@link flushMoves} writes every recorded entry
 * with one set-based insert into `audit_pending` (decision 0020) before the transaction commits — one statement for a
 * whole batch of events, however many effects it moved. The verb that opened the transaction seals the entries after
 * its commit (`withAuditSealed`). Moves by the clock are audited inside the statement that makes them (lease.ts).
 */
import type { SideEffectStatus } from "@/db/schema/enums";
import { appendAuditPendingMany } from "../../audit/append";
import { effectsUnknown } from "../../notifications/facts";
import { enqueueNotifications } from "../../notifications/outbox";
import type { Actor, SystemActor } from "../../authz";
import type { Db } from "@/db";
import {
  auditOf,
  TRANSITION_AUDIT_ACTION,
  type Cause,
  type CauseOf,
  type Origin,
  type TransitionName,
} from "./transitions";

/** One moved effect, as its audit entry records it. */
type Move = {
  transition: TransitionName;
  taskId: string;
  name: string;
  idempotencyKey: string;
  from: Origin;
  to: SideEffectStatus;
  /** The status reason the move wrote. */
  reason: string | null;
};

/** The entries recorded by the movers of one transaction, written by {@link flushMoves}. */
type Journal = Array<{ actor: Actor; move: Move; eventId: string | undefined }>;

/**
 * The actor and cause of a piece of work's moves. `eventId`: the stored event that causes them (cause `event`).
 * Movers made with {@link forEvent} share their parent's journal.
 */
export type Mover<C extends Cause = Cause> = {
  readonly actor: Actor;
  readonly cause: C;
  readonly eventId?: string;
  readonly journal: Journal;
};

/** A mover for `actor`'s work, with an empty journal. */
export function mover<C extends Cause>(actor: Actor, cause: C): Mover<C> {
  return { actor, cause, journal: [] };
}

/** The same mover for the moves one stored event causes (its id goes into their entries). */
export function forEvent(by: Mover<"event">, eventId: string): Mover<"event"> {
  return { ...by, eventId };
}

/** The actor of moves made by the server's clock. */
export function clockActor(tenantId: string): SystemActor {
  return { kind: "system", tenantId, label: "clock" };
}

/** The target of an effect's audit entries. */
function effectTarget(taskId: string, name: string): string {
  return `side_effect:${taskId}/${name}`;
}

/**
 * Records moves of transition `t` made by `by`, when the lifecycle audits `t` under `by`'s cause (else the verb's own
 * entry records them, and nothing is recorded).
 */
export function recordMoves<T extends TransitionName>(
  by: Mover<CauseOf<T>>,
  t: T,
  moves: ReadonlyArray<Omit<Move, "transition">>,
): void {
  if (!moves.length || auditOf(t, by.cause) !== "own") return;
  for (const m of moves) by.journal.push({ actor: by.actor, move: { transition: t, ...m }, eventId: by.eventId });
}

/** The details of a move's entry (the same keys as the entries the clock's statements write, lease.ts). */
function moveDetails(move: Move, eventId?: string): Record<string, unknown> {
  return {
    transition: move.transition,
    from: move.from,
    to: move.to,
    idempotency_key: move.idempotencyKey,
    reason: move.reason,
    ...(eventId ? { event_id: eventId } : {}),
  };
}

/**
 * Writes the entries `by`'s journal holds (one insert for all of them; nothing when it is empty) and empties it. Call
 * in the transaction that made the moves, before it commits.
 */
export async function flushMoves(tx: Db, by: Mover): Promise<void> {
  if (!by.journal.length) return;
  const moved = by.journal.splice(0);
  const entries = moved.map(({ actor, move, eventId }) => ({
    actor,
    input: {
      action: TRANSITION_AUDIT_ACTION,
      target: effectTarget(move.taskId, move.name),
      details: moveDetails(move, eventId),
    },
  }));
  await appendAuditPendingMany(tx, entries);
  const unknown = moved.filter((m) => m.move.to === "unknown");
  if (unknown.length) {
    await enqueueNotifications(
      tx,
      by.actor.tenantId,
      effectsUnknown(unknown.map(({ move, eventId }) => ({ ...move, eventId }))),
    );
  }
}
