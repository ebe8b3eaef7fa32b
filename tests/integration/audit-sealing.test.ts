/**
 * Audit sealing (docs/decisions/0020-audit-sealing.md), on real PostgreSQL through the built server: the hot paths'
 * audit entries are in the hash chain when their answer arrives, under concurrency too; an entry left pending (its
 * change committed, its seal never ran, as after a crash) is sealed by the next read of the log and by the next process
 * that opens the database; sealed entries verify like any other, interleaved with people's synchronous entries.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openDatabase, queryRows, type Db } from "@/db";
import type { AuditAction } from "@/lib/domain/audit/actions";
import { appendAudit, appendAuditPending } from "@/lib/domain/audit/append";
import type { Actor } from "@/lib/domain/authz";
import { sha256Hex } from "@/lib/domain/crypto/canonical";
import { checkpoint, intentBody, newKey, postIntent } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { api, createTestTenant, newTaskId, testDbForFile, type TestTenant } from "./helpers";
import { testDatabaseUrl } from "../support/env";

const handle = testDbForFile();

const pendingCount = async (t: TestTenant) =>
  (
    await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from audit_pending where tenant_id = ${t.tenantId}`,
    )
  )[0]!.n;
const intentAudits = async (t: TestTenant, taskId: string) =>
  (
    await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from audit_log where tenant_id = ${t.tenantId} and action = 'side_effect.intent_recorded' and target like ${`side_effect:${taskId}/%`}`,
    )
  )[0]!.n;

const runtimeActor = (t: TestTenant, keyId: string) =>
  ({
    kind: "api_key",
    tenantId: t.tenantId,
    keyId,
    keyName: keyId.replace("-", " "),
    role: "runtime",
  }) as unknown as Actor;

/** An entry written the way the hot paths write one, committed, and never sealed (what a crash leaves behind). */
async function leavePending(db: Db, t: TestTenant, target: string): Promise<void> {
  const actor = runtimeActor(t, "left-pending");
  await db.transaction(async (tx) =>
    appendAuditPending(tx, actor, { action: "task.checkpointed", target, details: { why: "no seal ran" } }),
  );
}

describe("audit sealing", () => {
  it("every intent answered is in the chain, in order, with nothing pending — 40 concurrent writers on one tenant", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const answers = await Promise.all(
      // Forty different writes, each its own payload (one payload twice is a duplicate, decision 0029).
      Array.from({ length: 40 }, (_, i) =>
        postIntent(t.apiKey, taskId, `write_${i}`, intentBody(newKey(), { payload_digest: sha256Hex(`write_${i}`) })),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    // No read of the log has run yet: the entries were sealed by the requests themselves.
    expect(await intentAudits(t, taskId)).toBe(40);
    expect(await pendingCount(t)).toBe(0);
    const seqs = await queryRows<{ seq: number }>(
      handle.db,
      sql`select seq::int as seq from audit_log where tenant_id = ${t.tenantId} order by seq`,
    );
    expect(seqs.map((r) => r.seq)).toEqual(seqs.map((_, i) => i + 1));
    const owner = await signInAs(t, "owner");
    const verify = await api(owner).get<{ valid: boolean; checked: number }>("/api/v1/audit/verify");
    expect(verify.status, verify.text).toBe(200);
    expect(verify.body).toMatchObject({ valid: true });
  });

  it("an entry left pending is sealed by the next read of the log, after the entries sealed before it, and verifies", async () => {
    const t = await createTestTenant(handle.db);
    const owner = await signInAs(t, "owner");
    await leavePending(handle.db, t, "task:left-behind");
    expect(await pendingCount(t)).toBe(1);
    // A person's synchronous entry meanwhile (an API key made) takes the next seq; the pending one follows it.
    const made = await api(owner).post<{ id: string }>("/api/v1/settings/api-keys", {
      name: `k-${newKey().slice(0, 8)}`,
    });
    expect(made.status, made.text).toBeLessThan(300);
    // The audit page reads the log (and seals first).
    const page = await api(owner).get<string>("/audit");
    expect(page.status).toBe(200);
    const last = await queryRows<{ seq: number; action: string; target: string }>(
      handle.db,
      sql`select seq::int as seq, action, target from audit_log where tenant_id = ${t.tenantId} order by seq desc limit 2`,
    );
    expect(last[0]).toMatchObject({ action: "task.checkpointed", target: "task:left-behind" });
    expect(last[1]!.action).toBe("api_key.created");
    expect(last[0]!.seq).toBe(last[1]!.seq + 1);
    expect(page.text).toContain("task:left-behind");
    expect(await pendingCount(t)).toBe(0);
    const verify = await api(owner).get<{ valid: boolean }>("/api/v1/audit/verify");
    expect(verify.body).toMatchObject({ valid: true });
  });

  it("an entry written under a name from before the naming rule stays as stored: shown, found by target, verified", async () => {
    const t = await createTestTenant(handle.db);
    const owner = await signInAs(t, "owner");
    // What an earlier build wrote for a stored policy version (decision 0023): the vocabulary no longer holds the name.
    const earlierName = "policy.store" as AuditAction;
    await handle.db.transaction((tx) =>
      appendAudit(tx, runtimeActor(t, "earlier-build"), { action: earlierName, target: "policy:7", details: {} }),
    );
    const page = await api(owner).get<string>(`/audit?target=${encodeURIComponent("policy:7")}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(">policy.store<");
    const [row] = await queryRows<{ action: string }>(
      handle.db,
      sql`select action from audit_log where tenant_id = ${t.tenantId} and target = 'policy:7'`,
    );
    expect(row!.action).toBe("policy.store");
    const verify = await api(owner).get<{ valid: boolean }>("/api/v1/audit/verify");
    expect(verify.body).toMatchObject({ valid: true });
  });

  it("a process that opens the database seals what a crash left pending", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    await leavePending(handle.db, t, "task:crashed-before-seal");
    expect(await pendingCount(t)).toBe(1);
    const reopened = await openDatabase({ url: testDatabaseUrl(), max: 1 });
    try {
      expect(await pendingCount(t)).toBe(0);
      const [row] = await queryRows<{ action: string }>(
        handle.db,
        sql`select action from audit_log where tenant_id = ${t.tenantId} order by seq desc limit 1`,
      );
      expect(row!.action).toBe("task.checkpointed");
    } finally {
      await reopened.close();
    }
  });

  it("another tenant's scope cannot seal, read or write a tenant's pending entries", async () => {
    const a = await createTestTenant(handle.db, { roles: [] });
    const b = await createTestTenant(handle.db, { roles: [] });
    await leavePending(handle.db, a, "task:a-only");
    const walled = (await openDatabase({ url: testDatabaseUrl(), max: 1 })) as Awaited<ReturnType<typeof openDatabase>>;
    try {
      // Opening sealed a's entry; leave another and try from b's scope.
      await leavePending(handle.db, a, "task:a-again");
      const asB = walled.scoped({ tenantId: b.tenantId });
      const [sealed] = await queryRows<{ n: number }>(asB, sql`select seal_audit(${a.tenantId}::uuid) as n`);
      expect(sealed!.n).toBe(0);
      expect(await queryRows(asB, sql`select id from audit_pending where tenant_id = ${a.tenantId}`)).toEqual([]);
      expect(await pendingCount(a)).toBe(1);
      await expect(leavePending(asB, a, "task:forged")).rejects.toThrow();
    } finally {
      await walled.close();
    }
  });
});
