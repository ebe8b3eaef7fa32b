/**
 * States set up for the custody suites: an effect left `unknown` by an interrupted run, an approval decided
 * directly in the database (sealed with the server's key, as the server seals what it writes).
 * Everything is per test: no shared mutable state.
 */
import { sql } from "drizzle-orm";
import { expect, inject } from "vitest";
import { queryRows, type Db } from "@/db";
import { signingKeyFromString, type SigningKey } from "@/lib/domain/crypto/signing";
import { effectSeal, type SealedEffect } from "@/lib/domain/side-effects/lifecycle/seal";
import { sealDecisions } from "@/lib/domain/approvals/seal";
import { makeEvent, newTaskId, type TestTenant } from "../helpers";
import { checkpoint, hex, intentBody, newKey, postIntent, sendEvents } from "./custody-calls";
import { effectRow } from "./stored-rows";

/**
 * A checkpointed task whose effect went in flight (intent → go) and whose run was then interrupted: the effect is
 * `unknown`, ready to reconcile.
 * @param opts `name` of the effect (default update_record), its `tool` (default the name), and the status it was
 *   `declared` with before the intent (`not_started` or `approved`).
 */
export async function unknownEffect(
  db: Db,
  t: TestTenant,
  opts: { name?: string; tool?: string; declared?: "not_started" | "approved" } = {},
): Promise<{ taskId: string; key: string; name: string }> {
  const taskId = newTaskId();
  const key = newKey();
  const name = opts.name ?? "update_record";
  const tool = opts.tool ?? name;
  await checkpoint(t, taskId, {
    side_effects: { [name]: { idempotency_key: key, status: opts.declared ?? "not_started", tool } },
  });
  if (opts.declared === "approved") await approveDirectly(db, t.tenantId, taskId, name);
  const go = await postIntent(t.apiKey, taskId, name, intentBody(key, { tool }));
  expect(go.status, go.text).toBe(200);
  expect(go.body.decision).toBe("go");
  await sendEvents(t, [
    makeEvent(taskId, {
      type: "run.interrupted",
      occurred_at: new Date(Date.now() + 1000).toISOString(),
      attrs: { reason: "sandbox_lost" },
    }),
  ]);
  expect((await effectRow(db, t.tenantId, taskId, name))?.status).toBe("unknown");
  return { taskId, key, name };
}

/**
 * Moves a declared effect from `awaiting_approval` to `approved` directly in the database. A checkpoint cannot approve
 * an effect (only an approver's recorded decision does); this stands in for that decision in tests of what follows it.
 */
export async function approveDirectly(
  db: Db,
  tenantId: string,
  taskId: string,
  name: string,
  bind: { payloadDigest?: string; action?: string } = {},
): Promise<void> {
  const rows = await queryRows(
    db,
    sql`update side_effects set status = 'approved' where tenant_id = ${tenantId} and task_id = ${taskId} and name = ${name}
          and status = 'awaiting_approval' returning name`,
  );
  if (!rows.length) throw new Error(`${name} of ${taskId} was not awaiting approval`);
  await sealAsServer(db, tenantId, taskId, name);
  // The checkpoint's declaration made an approval request: record the decision on it, bound to the digest and
  // action the test's intent sends (intentBody's by default; no approver id: the approver's role is then not checked).
  await db.execute(sql`
    update approval_requests
    set payload_digest = coalesce(payload_digest, ${bind.payloadDigest ?? hex("e")}), action = ${bind.action ?? "records.update"},
        decision = 'approve', decided_by = 'approver (test)',
        decided_at = now(), expires_at = now() + interval '1 day'
    where tenant_id = ${tenantId} and task_id = ${taskId} and side_effect = ${name} and superseded_by is null and decision is null`);
  await sealDecisionsAsServer(db, tenantId, taskId);
}

/** The server's signing key, for calling verbs that check seals (the attention queue) as the server does. */
export function serverSigningKey(): SigningKey {
  return signingKeyFromString(inject("signingKeyPem"));
}

/**
 * Seals the decided requests of a task as stored with the server's key (decision 0036), as the server does when it
 * records a decision: for tests that stand in for an approver's decision by writing the row directly.
 */
export async function sealDecisionsAsServer(db: Db, tenantId: string, taskId: string): Promise<void> {
  const key = signingKeyFromString(inject("signingKeyPem"));
  const ids = await queryRows<{ id: string }>(
    db,
    sql`select id from approval_requests where tenant_id = ${tenantId} and task_id = ${taskId} and decision is not null`,
  );
  await sealDecisions(
    db,
    key,
    tenantId,
    ids.map((r) => r.id),
  );
}

/**
 * Seals an effect's row as stored with the server's key (decision 0035), as the server does when it moves an effect:
 * for tests that stand in for a server decision by writing the row directly.
 */
export async function sealAsServer(db: Db, tenantId: string, taskId: string, name: string): Promise<void> {
  const key = signingKeyFromString(inject("signingKeyPem"));
  const [row] = await queryRows<SealedEffect>(
    db,
    sql`select task_id, name, idempotency_key, status, receipt from side_effects
        where tenant_id = ${tenantId} and task_id = ${taskId} and name = ${name}`,
  );
  if (!row) throw new Error(`${name} of ${taskId} does not exist`);
  await db.execute(sql`update side_effects set seal = ${effectSeal(key, tenantId, row)}
                       where tenant_id = ${tenantId} and task_id = ${taskId} and name = ${name}`);
}
