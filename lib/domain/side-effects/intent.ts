/**
 * `POST /api/v1/tasks/{task_id}/side-effects/{name}/intent` — register the intent to make an external write
 * (DESIGN.md "Side effect"; issue "Side-effect custody").
 *
 * Exactly one concurrent caller gets `go`: a new effect is created by `INSERT … ON CONFLICT DO NOTHING
 * RETURNING`, an existing one moves by `UPDATE … WHERE status = <observed> RETURNING`; whoever gets no row
 * back lost the race and re-reads the state. No check-then-write in JavaScript decides the winner.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { expireLeases, findSideEffect, type SideEffectRow } from "@/db/queries/side-effects";
import { findTask } from "@/db/queries/tasks";
import type { SideEffectStatus } from "@/db/schema/enums";
import type { Receipt } from "@/lib/client/types";
import { appendAudit } from "../audit/append";
import { authorize, type Actor } from "../authz";
import { DomainError, notFound, validationError } from "../errors";
import { SIDE_EFFECT_NAME } from "../tasks/record";
import { checkTaskId } from "../tasks/read";
import { findSecrets } from "../events/redact";
import { withRetry } from "../tx";

/** Idempotency keys: 8–200 characters of letters, digits and `. _ : -`. */
export const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{8,200}$/;

/** Default lease of an intent: how long the holder may take before the effect counts as `unknown`. */
export const DEFAULT_LEASE_SECONDS = 300;

export const intentBodySchema = z.strictObject({
  idempotency_key: z.string(),
  payload_digest: z.string().min(1, "payload_digest is required").max(200),
  action: z.string().min(1, "action is required").max(200),
  mutation: z.boolean({ error: "mutation must be true or false" }),
  tool: z.string().min(1).max(200).optional(),
  lease_seconds: z.number().int().min(5).max(86_400).optional(),
});

export type IntentOutcome =
  | { decision: "go"; lease_expires_at: string }
  | { decision: "replay"; receipt: Receipt };

/**
 * Checks the idempotency key first, so a missing or malformed key is a 400 whatever else is wrong.
 * @throws DomainError bad_request (key), validation_failed (other fields).
 */
export function parseKeyed<T extends { idempotency_key: string }>(schema: z.ZodType<T>, body: unknown): T {
  const key = body && typeof body === "object" ? (body as { idempotency_key?: unknown }).idempotency_key : undefined;
  if (typeof key !== "string" || !IDEMPOTENCY_KEY.test(key)) {
    throw new DomainError(
      "bad_request",
      key === undefined
        ? "idempotency_key is required."
        : "idempotency_key must be 8–200 characters of letters, digits, '.', '_', ':' or '-'.",
      { fields: [{ path: "idempotency_key", message: "missing or malformed" }] },
    );
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const secrets = findSecrets(parsed.data);
  if (secrets.length) {
    throw validationError(
      secrets.map((s) => ({ path: s.path.split("."), message: `looks like a credential value (${s.kind}); send references, never secrets` })),
    );
  }
  return parsed.data;
}

/** Validates a side-effect name from the URL. @throws DomainError not_found */
export function checkEffectName(name: string): void {
  if (!SIDE_EFFECT_NAME.test(name)) throw notFound(`Side effect ${name}`);
}

/** What a retry goes back to after a reconcile finds the write was not applied. */
function retryStatusFrom(status: SideEffectStatus): SideEffectStatus {
  return status === "approved" ? "approved" : "not_started";
}

/**
 * Registers an intent.
 * @returns `go` with the lease expiry (ISO), or `replay` with the stored receipt.
 * @throws DomainError not_found (task), bad_request (key), validation_failed, idempotency_key_mismatch (422),
 *   in_flight (409, another holder's lease is live), reconcile_required (409, effect unknown),
 *   approval_required (403, awaiting approval), principal_revoked (403, a mutation for a revoked principal).
 */
export async function registerIntent(
  db: Db,
  actor: Actor,
  taskId: string,
  name: string,
  body: unknown,
): Promise<IntentOutcome> {
  authorize(actor, "side_effects.intent");
  checkTaskId(taskId);
  checkEffectName(name);
  const input = parseKeyed(intentBodySchema, body);
  const tenantId = actor.tenantId;
  const leaseSeconds = input.lease_seconds ?? DEFAULT_LEASE_SECONDS;
  // Committed on its own: an expired lease makes the effect unknown even when this intent is then refused.
  await expireLeases(db, tenantId, taskId);

  return withRetry(() =>
    db.transaction(async (tx) => {
      const task = await findTask(tx, tenantId, taskId);
      if (!task) throw notFound(`Task ${taskId}`);
      if (input.mutation && task.principal) {
        const revoked = await queryRows<{ reason: string }>(
          tx,
          sql`select reason from principal_revocations where tenant_id = ${tenantId} and principal = ${task.principal}`,
        );
        if (revoked[0]) {
          throw new DomainError(
            "principal_revoked",
            `The principal ${task.principal} was revoked (${revoked[0].reason}); no write may start on its authority.`,
          );
        }
      }

      const created = await queryRows<{ lease_expires_at: string }>(
        tx,
        sql`insert into side_effects (tenant_id, task_id, name, idempotency_key, status, tool, action, mutation,
                                      payload_digest, intent_at, intent_attempt, lease_expires_at, retry_status)
            values (${tenantId}, ${taskId}, ${name}, ${input.idempotency_key}, 'in_flight', ${input.tool ?? name},
                    ${input.action}, ${input.mutation}, ${input.payload_digest}, now(), ${task.current_attempt || null},
                    now() + make_interval(secs => ${leaseSeconds}), 'not_started')
            on conflict do nothing
            returning to_char(lease_expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as lease_expires_at`,
      );
      if (created[0]) {
        await auditIntent(tx, actor, taskId, name, input.idempotency_key, "created");
        return { decision: "go" as const, lease_expires_at: created[0].lease_expires_at };
      }

      for (let round = 0; round < 3; round++) {
        const effect = await findSideEffect(tx, tenantId, taskId, name);
        if (!effect) {
          throw new DomainError(
            "idempotency_key_mismatch",
            `idempotency_key "${input.idempotency_key}" already belongs to another side effect of this tenant; each effect needs its own key.`,
          );
        }
        const decided = decideExisting(effect, input);
        if (decided !== "try_go") return decided;
        const moved = await queryRows<{ lease_expires_at: string }>(
          tx,
          sql`update side_effects
              set status = 'in_flight', status_reason = null, updated_at = now(), intent_at = now(),
                  intent_attempt = ${task.current_attempt || null}, payload_digest = ${input.payload_digest},
                  action = ${input.action}, mutation = ${input.mutation}, tool = coalesce(${input.tool ?? null}::text, tool),
                  lease_expires_at = now() + make_interval(secs => ${leaseSeconds}),
                  retry_status = ${retryStatusFrom(effect.status)}::side_effect_status
              where tenant_id = ${tenantId} and task_id = ${taskId} and name = ${name}
                and idempotency_key = ${input.idempotency_key} and status = ${effect.status}::side_effect_status
              returning to_char(lease_expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as lease_expires_at`,
        );
        if (moved[0]) {
          await auditIntent(tx, actor, taskId, name, input.idempotency_key, effect.status);
          return { decision: "go" as const, lease_expires_at: moved[0].lease_expires_at };
        }
      }
      throw new DomainError("in_flight", `Another intent for ${name} is being registered right now; try again shortly.`);
    }),
  );
}

/**
 * The answer for an existing effect, or `try_go` when it may move to in_flight.
 * Source of each rule: DESIGN.md "Side effect" (replay, mismatch, reconcile_required, approval_required).
 */
export function decideExisting(
  effect: Pick<SideEffectRow, "idempotency_key" | "payload_digest" | "status" | "receipt" | "lease_expires_at">,
  input: { idempotency_key: string; payload_digest: string },
): IntentOutcome | "try_go" {
  if (effect.idempotency_key !== input.idempotency_key) {
    throw new DomainError(
      "idempotency_key_mismatch",
      `This side effect is bound to idempotency key "${effect.idempotency_key}"; retry with that key.`,
    );
  }
  if (effect.payload_digest && effect.payload_digest !== input.payload_digest) {
    throw new DomainError(
      "idempotency_key_mismatch",
      "The same idempotency key was used with a different payload_digest. A changed payload needs a new side effect and key.",
      { stored_payload_digest: effect.payload_digest },
    );
  }
  switch (effect.status) {
    case "completed":
      return { decision: "replay", receipt: effect.receipt! };
    case "unknown":
      throw new DomainError(
        "reconcile_required",
        "The outcome of the earlier attempt is unknown (request sent, no receipt). A responder must reconcile it before any retry.",
      );
    case "in_flight":
      throw new DomainError(
        "in_flight",
        `Another holder's intent is live until ${effect.lease_expires_at ?? "its receipt arrives"}; wait for its receipt.`,
      );
    case "awaiting_approval":
      throw new DomainError("approval_required", "This write needs a fresh approval before it may run.");
    default:
      return "try_go";
  }
}

async function auditIntent(tx: Db, actor: Actor, taskId: string, name: string, key: string, from: string) {
  await appendAudit(tx, actor, {
    action: "side_effect.intent",
    target: `side_effect:${taskId}/${name}`,
    details: { idempotency_key: key, from },
  });
}
