/**
 * `POST /api/v1/tasks/{task_id}/side-effects/{name}/reconcile` — a person settles an `unknown` effect
 * (docs/concepts.md#reconcile): `completed` (with the external operation id found) or `not_applied` (back to where a
 * retry starts, safe to retry with the same key: `not_started`, or `approved` when it went under an approval and the
 * workspace lets a retry reuse it — otherwise the retry needs a fresh approval, decision 0029).
 * Only responder, owner and admin may; a runtime key may not. One guarded UPDATE … WHERE status = 'unknown'
 * decides a race; the audit row and a timeline event are written in the same transaction.
 */
import { sql } from "drizzle-orm";
import { insertServerEvent } from "../events/server-events";
import { z } from "zod";
import { findSideEffect } from "@/db/queries/side-effects";
import { findLiveTask } from "../tasks/deleted";
import type { SideEffectReconcile } from "@/db/schema";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { DomainError, notFound, validationError } from "../errors";
import { checkTaskId } from "../tasks/read";
import { checkEffectName } from "./intent";
import { lookupSideEffect, type LookupAnswer, type LookupOptions } from "./lookup";
import { expireLeasesNow } from "./lifecycle/lease";
import { settleUnknown } from "./lifecycle/statements";
import { retryReusesApproval } from "../approvals/policy";
import { findSecrets, refuseSecrets } from "../events/redact";
import { isoTimeField } from "../time";
import { unsafeTextReason } from "../typed-text";
import type { SigningContext } from "../context";
import { sealMovedEffects } from "./lifecycle/seal";

export const reconcileBodySchema = z
  .strictObject({
    outcome: z.enum(["completed", "not_applied"], { error: 'outcome must be "completed" or "not_applied"' }),
    external_operation_id: z.string().trim().min(1).max(500).optional(),
    result_digest: z.string().max(200).optional(),
    /** When the external write happened, if known (defaults to the lookup's answer, else the time of the decision). */
    completed_at: isoTimeField("completed_at", { plausible: true }).optional(),
    evidence: z
      .string({ error: "evidence is required: say how you know (a lookup answer, a ticket, a log line)" })
      .trim()
      .min(3, "evidence is required: say how you know (a lookup answer, a ticket, a log line)")
      .max(4000, "evidence is at most 4000 characters; link to longer material")
      .refine((v) => unsafeTextReason(v, { multiline: true }) === null, {
        error: (iss) => `evidence ${unsafeTextReason(String(iss.input), { multiline: true })}`,
      }),
    /** Ask the tool owner's lookup endpoint now and keep its answer with the decision. */
    use_lookup: z.boolean().optional(),
  })
  .superRefine((v, ctx) => {
    if (v.outcome === "not_applied" && v.external_operation_id) {
      ctx.addIssue({
        code: "custom",
        path: ["external_operation_id"],
        message: "an effect that was not applied has no external operation; leave external_operation_id out",
      });
    }
    if (v.outcome === "completed" && !v.external_operation_id && !v.use_lookup) {
      ctx.addIssue({
        code: "custom",
        path: ["external_operation_id"],
        message:
          "external_operation_id is required when the outcome is completed (the receipt found in the external system), unless use_lookup finds it",
      });
    }
  });

export type ReconcileResult = {
  name: string;
  status: "completed" | "not_started" | "approved";
  reconcile: SideEffectReconcile;
  audit_seq: number;
};

/**
 * Settles an unknown effect.
 * @throws DomainError forbidden (role or runtime key), not_found, validation_failed (field named; e.g. evidence, an
 *   outcome or operation id the lookup in the same request contradicts, a completed_at outside 2000…now+1 day),
 *   conflict (409: someone settled it first — message says who and when — or it is not unknown).
 */
export async function reconcileSideEffect(
  { db, actor, signingKey }: SigningContext,
  { taskId, name, body, ...opts }: { taskId: string; name: string; body: unknown } & LookupOptions,
): Promise<ReconcileResult> {
  authorize(actor, "side_effects.reconcile");
  checkTaskId(taskId);
  checkEffectName(name);
  const parsed = reconcileBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  // The decision and its evidence go into the audit chain, kept for good: a pasted credential is refused, not stored.
  refuseSecrets(parsed.data, "The reconcile decision", "describe the evidence without the credential");
  const input: typeof parsed.data = { ...parsed.data };

  // An in-flight effect whose lease ran out is unknown: settle that first, in its own committed statement.
  await expireLeasesNow(db, actor.tenantId, taskId);

  // Calling a write "not applied" clears it for a retry: when the tool owner has a lookup, it is always asked,
  // whether or not the person ticked it, and its answer is kept with the decision.
  let lookup: LookupAnswer | undefined;
  if (input.use_lookup || input.outcome === "not_applied")
    lookup = await lookupSideEffect({ db, actor }, { taskId, name, ...opts });
  if (lookup && !lookup.configured && !input.use_lookup) lookup = undefined;
  if (
    input.outcome === "completed" &&
    input.external_operation_id &&
    lookup?.configured &&
    lookup.outcome === "found" &&
    lookup.external_operation_id !== input.external_operation_id
  ) {
    throw validationError([
      {
        path: ["external_operation_id"],
        message: `the lookup just found operation ${lookup.external_operation_id}, not ${input.external_operation_id}; check which one is right`,
      },
    ]);
  }
  if (input.outcome === "not_applied" && lookup?.configured && lookup.outcome === "found") {
    // Clearing an applied write for a retry is how double writes happen: the person's evidence must not
    // contradict the tool owner's answer given in the same request.
    throw validationError([
      {
        path: ["outcome"],
        message: `the lookup just found the write (operation ${lookup.external_operation_id}), so it was applied; reconcile it as completed, or have the tool owner correct the lookup before calling it not applied`,
      },
    ]);
  }
  const secrets = findSecrets({
    external_operation_id: input.external_operation_id,
    result_digest: input.result_digest,
  });
  if (secrets.length) {
    throw validationError(
      secrets.map((s) => ({ path: [s.path], message: `looks like a credential value (${s.kind})` })),
    );
  }
  if (input.outcome === "completed" && !input.external_operation_id) {
    if (lookup?.configured && lookup.outcome === "found" && lookup.external_operation_id) {
      input.external_operation_id = lookup.external_operation_id;
    } else {
      throw validationError([
        {
          path: ["external_operation_id"],
          message: `external_operation_id is required: the lookup did not find the write (${lookup && lookup.configured ? lookup.outcome : "no lookup registered"})`,
        },
      ]);
    }
  }

  const by = actorRef(actor).label;
  const at = new Date().toISOString();
  const decision: SideEffectReconcile = {
    outcome: input.outcome,
    evidence: input.evidence,
    external_operation_id: input.external_operation_id ?? null,
    ...(lookup ? { lookup } : {}),
    by,
    at,
  };

  // A write found not applied goes back to where a retry starts; an approval its first go used covers the retry only
  // when the workspace says so (Settings → Approvals).
  const reuseApproval = input.outcome === "not_applied" && (await retryReusesApproval(db, actor.tenantId));

  return db.transaction(async (tx) => {
    if (!(await findLiveTask(tx, actor.tenantId, taskId))) throw notFound(`Task ${taskId}`);
    const before = await findSideEffect(tx, actor.tenantId, taskId, name);
    if (!before) throw notFound(`Side effect ${name} of task ${taskId}`);

    // The receipt says when the external write happened: the person's value, else the lookup's answer when it
    // names the same operation, else the time of this decision.
    const found =
      lookup?.configured && lookup.outcome === "found" && lookup.external_operation_id === input.external_operation_id
        ? lookup
        : null;
    const receipt =
      input.outcome === "completed"
        ? {
            external_operation_id: input.external_operation_id!,
            result_digest: input.result_digest ?? found?.result_digest ?? null,
            completed_at: input.completed_at
              ? new Date(input.completed_at).toISOString()
              : found?.completed_at && !Number.isNaN(Date.parse(found.completed_at))
                ? new Date(found.completed_at).toISOString()
                : at,
          }
        : null;
    const key = { tenantId: actor.tenantId, taskId, name, decisionJson: JSON.stringify(decision) };
    const settled = await settleUnknown(
      tx,
      input.outcome === "completed"
        ? {
            ...key,
            outcome: "completed",
            receiptJson: JSON.stringify(receipt),
            reason: `Reconciled by ${by}: completed.`,
          }
        : {
            ...key,
            outcome: "not_applied",
            reuseApproval,
            reason: `Reconciled by ${by}: not applied; safe to retry with the same key.`,
          },
    );
    const row = settled === null ? undefined : { status: settled };
    if (!row) {
      // Lost a race or never unknown: read the committed state to say who settled it and what it is now.
      const current = (await findSideEffect(tx, actor.tenantId, taskId, name)) ?? before;
      const last = current.last_reconcile;
      const status = current.status.replace("_", " ");
      if (last && current.status !== "unknown") {
        throw new DomainError(
          "conflict",
          `Already settled by ${last.by} at ${last.at} as ${last.outcome.replace("_", " ")}; it is now ${status}.`,
          { current_status: current.status, settled_by: last.by, settled_at: last.at },
        );
      }
      throw new DomainError(
        "conflict",
        `Only an effect whose outcome is unknown can be reconciled; ${name} is ${status}.`,
        {
          current_status: current.status,
        },
      );
    }
    // The settled state carries the server's seal, committed with the decision (decision 0035).
    await sealMovedEffects(tx, signingKey, actor.tenantId, [taskId], [name]);
    const audit = await appendAudit(tx, actor, {
      action: "side_effect.reconciled",
      target: `side_effect:${taskId}/${name}`,
      details: {
        outcome: input.outcome,
        evidence: input.evidence,
        external_operation_id: input.external_operation_id ?? null,
        lookup_outcome: lookup && lookup.configured ? lookup.outcome : null,
        new_status: row.status,
      },
    });
    await insertServerEvent(tx, {
      tenantId: actor.tenantId,
      eventId: `custody:reconcile:${taskId}:${name}:${audit.seq}`,
      taskId,
      plane: "session",
      type: "decision.recorded",
      occurredAt: sql`${at}::timestamptz`,
      actor: by,
      attrs: {
        kind: "reconcile",
        side_effect: name,
        outcome: input.outcome,
        evidence: input.evidence,
        new_status: row.status,
        audit_seq: audit.seq,
      },
    });
    return { name, status: row.status, reconcile: decision, audit_seq: audit.seq };
  });
}
