/**
 * Approvals on real PostgreSQL through the HTTP API (docs/concepts.md#approvals): requests from intents, checkpoints
 * and tenant rules; decisions (roles, separation of duties, races: 50 concurrent deciders → exactly one stored); single
 * use; another digest refused (approval_mismatch); a policy change invalidates at once (audited, on the timeline); the
 * gate's approval reasons; tenant walls; the audit chain verification.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { requestApproval } from "@/lib/domain/approvals/requests";
import { approvalContext } from "@/lib/domain/approvals/read";
import { payloadDigestOf, userActor } from "../support/approvals";
import { openPolicy } from "../support/policy-document";
import { askGate, checkpoint, sendEvents } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { api, createTestTenant, makeEvent, newTaskId, rid, testDbForFile, type Auth, type TestTenant } from "./helpers";

const handle = testDbForFile();
const ARGS = { title: "Q3 custody report", recipients: ["board@example.com"] };
const DIGEST = payloadDigestOf("publish_report", ARGS);

type ErrorBody = { error: { code: string; message: string; details?: Record<string, unknown> } };
type Approval = {
  id: string;
  status: string;
  stale_reasons: string[];
  policy_version: string;
  decision?: { decision: string; decided_by: string };
  changes?: Array<{ field: string; approved: string; current: string }>;
};

const intentBody = (taskId: string, over: Record<string, unknown> = {}) => ({
  idempotency_key: `publish-${taskId}`,
  payload_digest: DIGEST,
  action: "publish_report",
  tool: "publish_report",
  mutation: true,
  attempt: 1,
  requires_approval: true,
  payload: ARGS,
  agent: "reporter",
  agent_version: "1.0.0",
  ...over,
});

const postIntent = (t: TestTenant, taskId: string, body: unknown, name = "publish_report") =>
  api(t.apiKey).post<ErrorBody & { decision?: string }>(`/api/v1/tasks/${taskId}/side-effects/${name}/intent`, body);

/** A task with a checkpoint and a pending publish_report approval requested by the runtime. */
async function pending(t: TestTenant): Promise<{ taskId: string; approvalId: string }> {
  const taskId = newTaskId("appr");
  await checkpoint(t, taskId, { side_effects: {} });
  const res = await postIntent(t, taskId, intentBody(taskId));
  expect(res.status, res.text).toBe(403);
  expect(res.body.error.code).toBe("approval_required");
  return { taskId, approvalId: res.body.error.details!.approval_id as string };
}

const decide = (auth: Auth, id: string, body: unknown) =>
  api(auth).post<Approval & ErrorBody>(`/api/v1/approvals/${id}/decision`, body);

describe("approval requests", () => {
  it("an intent that needs approval creates one request; asking again returns the same one", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const { taskId, approvalId } = await pending(t);
    const again = await postIntent(t, taskId, intentBody(taskId));
    expect(again.status).toBe(403);
    expect(again.body.error.details!.approval_id).toBe(approvalId);
    const [n] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from approval_requests where tenant_id = ${t.tenantId}`,
    );
    expect(n!.n).toBe(1);
    const got = await api(t.apiKey).get<Approval & { payload: unknown }>(`/api/v1/approvals/${approvalId}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ status: "pending", policy_version: "1", payload: ARGS });
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.reasons.map((r) => r.code)).toEqual(["approval_missing"]);
  });

  it("a tenant's approval-required action needs approval without the runtime saying so", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    expect(
      (
        await api(owner).put("/api/v1/settings/approval-rules/publish_report", {
          requires_approval: true,
          ttl_seconds: 3600,
        })
      ).status,
    ).toBe(200);
    const taskId = newTaskId("rule");
    await checkpoint(t, taskId, { side_effects: {} });
    const res = await postIntent(t, taskId, intentBody(taskId, { requires_approval: undefined }));
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("approval_required");
  });

  it("a checkpoint that declares an effect approved puts a request in the queue (only a decision approves)", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const taskId = newTaskId("ckpt");
    await checkpoint(t, taskId, {
      side_effects: {
        publish_report: { idempotency_key: `publish-${taskId}`, status: "approved", action: "publish_report" },
      },
    });
    const list = await api(t.apiKey).get<{ approvals: Approval[] }>(`/api/v1/approvals?task_id=${taskId}`);
    expect(list.body.approvals).toHaveLength(1);
    expect(list.body.approvals[0]).toMatchObject({ status: "pending", origin: "checkpoint" });
    const [effect] = await queryRows<{ status: string }>(
      handle.db,
      sql`select status from side_effects where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    expect(effect!.status).toBe("awaiting_approval");
    // The intent binds the digest; then it can be approved, and the write goes.
    expect((await postIntent(t, taskId, intentBody(taskId, { requires_approval: undefined }))).body.error.code).toBe(
      "approval_required",
    );
    const approver = await signInAs(t, "approver");
    expect((await decide(approver, list.body.approvals[0]!.id, { decision: "approve" })).status).toBe(200);
    expect((await postIntent(t, taskId, intentBody(taskId))).body.decision).toBe("go");
  });
});

describe("decisions", () => {
  it("50 concurrent decisions store exactly one; every other gets 409 already_decided naming it", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver", "admin", "owner"] });
    const { approvalId } = await pending(t);
    const sessions = [await signInAs(t, "approver"), await signInAs(t, "admin"), await signInAs(t, "owner")];
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        decide(
          sessions[i % 3],
          approvalId,
          i % 2 ? { decision: "approve" } : { decision: "reject", reason: `no ${i}` },
        ),
      ),
    );
    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    const lost = answers.filter((a) => a.status !== 200);
    expect(lost.every((a) => a.status === 409 && a.body.error.code === "already_decided")).toBe(true);
    for (const l of lost)
      expect(l.body.error.details).toMatchObject({
        decision: won[0]!.body.decision!.decision,
        decided_by: won[0]!.body.decision!.decided_by,
      });
    const [stored] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from approval_requests where tenant_id = ${t.tenantId} and decision is not null`,
    );
    expect(stored!.n).toBe(1);
    const [audited] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from audit_log where tenant_id = ${t.tenantId} and action = 'approval.decided'`,
    );
    expect(audited!.n).toBe(1);
  });

  it("a viewer, a responder and a runtime key may not decide; reject needs a reason", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver", "viewer", "responder"] });
    const { approvalId } = await pending(t);
    for (const who of [await signInAs(t, "viewer"), await signInAs(t, "responder"), t.apiKey]) {
      const res = await decide(who, approvalId, { decision: "approve" });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    const noReason = await decide(await signInAs(t, "approver"), approvalId, { decision: "reject" });
    expect(noReason.status).toBe(422);
    const [row] = await queryRows<{ decision: string | null }>(
      handle.db,
      sql`select decision from approval_requests where tenant_id = ${t.tenantId}`,
    );
    expect(row!.decision).toBeNull();
  });

  it("the requester may not decide their own request unless the tenant relaxes it", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver", "owner"] });
    const taskId = newTaskId("sod");
    await checkpoint(t, taskId, { side_effects: {} });
    const me = userActor(t, "approver");
    const ctx = await approvalContext(handle.db, t.tenantId, taskId);
    const seed = (key: string) =>
      handle.db.transaction((tx) =>
        requestApproval(tx, {
          tenantId: t.tenantId,
          taskId,
          sideEffect: `publish_${key}`,
          idempotencyKey: `publish-${key}-${rid()}`,
          principal: ctx.principal,
          action: "publish_report",
          tool: "publish_report",
          payload: ARGS,
          payloadDigest: DIGEST,
          inputDigest: ctx.input_digest,
          policyVersion: ctx.policy_version,
          agent: null,
          agentVersion: null,
          requestedBy: me,
        }),
      );
    const own = await seed("a");
    const approver = await signInAs(t, "approver");
    const refused = await decide(approver, own.id, { decision: "approve" });
    expect(refused.status).toBe(403);
    expect(refused.body.error.details).toMatchObject({ rule: "separation_of_duties" });
    const owner = await signInAs(t, "owner");
    expect((await api(owner).put("/api/v1/settings/approvals", { allow_self_approval: true })).status).toBe(200);
    const allowed = await decide(approver, own.id, { decision: "approve" });
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.body.decision).toMatchObject({ self_approved: true });
  });

  it("single use: an approval authorizes one go; another digest under it is refused with approval_mismatch", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const { taskId, approvalId } = await pending(t);
    expect((await decide(await signInAs(t, "approver"), approvalId, { decision: "approve" })).status).toBe(200);
    const otherArgs = { ...ARGS, recipients: ["everyone@example.com"] };
    const other = await postIntent(
      t,
      taskId,
      intentBody(taskId, { payload_digest: payloadDigestOf("publish_report", otherArgs), payload: otherArgs }),
    );
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe("approval_mismatch");
    expect(other.body.error.details).toMatchObject({
      approval_id: approvalId,
      bound_payload_digest: DIGEST,
      offered_payload_digest: payloadDigestOf("publish_report", otherArgs),
    });
    const view = await api(t.apiKey).get<Approval & { offered_payload: unknown }>(`/api/v1/approvals/${approvalId}`);
    expect(view.body.status).toBe("stale");
    expect(view.body.stale_reasons).toEqual(["payload_changed"]);
    expect(view.body.changes).toContainEqual({
      field: "payload_digest",
      approved: DIGEST,
      current: payloadDigestOf("publish_report", otherArgs),
    });
    expect(view.body.offered_payload).toEqual(otherArgs);
  });

  it("a fresh approval lets exactly one intent go", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const { taskId, approvalId } = await pending(t);
    expect((await decide(await signInAs(t, "approver"), approvalId, { decision: "approve" })).status).toBe(200);
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("resume");
    const answers = await Promise.all(Array.from({ length: 5 }, () => postIntent(t, taskId, intentBody(taskId))));
    expect(answers.filter((a) => a.status === 200 && a.body.decision === "go")).toHaveLength(1);
    const [row] = await queryRows<{ consumed_at: string | null }>(
      handle.db,
      sql`select consumed_at from approval_requests where id = ${approvalId}`,
    );
    expect(row!.consumed_at).not.toBeNull();
    // A second decision of a decided request is 409.
    expect(
      (await decide(await signInAs(t, "approver"), approvalId, { decision: "reject", reason: "late" })).status,
    ).toBe(409);
  });

  it("an intent from a new attempt raises the attempt, then asks for approval like any other; the approval goes to that attempt", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const taskId = newTaskId("appr-raise");
    await checkpoint(t, taskId, { side_effects: {} });
    const asked = await postIntent(t, taskId, intentBody(taskId, { attempt: 2 }));
    expect(asked.status, asked.text).toBe(403);
    expect(asked.body.error.code).toBe("approval_required");
    const approvalId = asked.body.error.details!.approval_id as string;
    const attempt = async () =>
      (
        await queryRows<{ n: number }>(
          handle.db,
          sql`select current_attempt as n from tasks where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
        )
      )[0]!.n;
    expect(await attempt()).toBe(2);
    expect((await decide(await signInAs(t, "approver"), approvalId, { decision: "approve" })).status).toBe(200);
    const stale = await postIntent(t, taskId, intentBody(taskId));
    expect(stale.status, stale.text).toBe(409);
    expect(stale.body.error.code).toBe("stale_attempt");
    const go = await postIntent(t, taskId, intentBody(taskId, { attempt: 2 }));
    expect(go.status, go.text).toBe(200);
    expect(go.body.decision).toBe("go");
    const [row] = await queryRows<{ consumed_attempt: number | null }>(
      handle.db,
      sql`select consumed_attempt from approval_requests where id = ${approvalId}`,
    );
    expect(row!.consumed_attempt).toBe(2);
  });

  it("a write reported by event meets the same rule: another digest is not approved (unknown), the approved one uses it", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const approver = await signInAs(t, "approver");
    const intentEvent = (taskId: string, digest: string) =>
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.intent",
        attempt: 1,
        occurred_at: new Date(Date.now() + 1000).toISOString(),
        attrs: {
          name: "publish_report",
          idempotency_key: `publish-${taskId}`,
          payload_digest: digest,
          action: "publish_report",
        },
      });
    const a = await pending(t);
    expect((await decide(approver, a.approvalId, { decision: "approve" })).status).toBe(200);
    await sendEvents(t, [intentEvent(a.taskId, "f".repeat(64))]);
    const [ra] = await queryRows<{ status: string; status_reason: string }>(
      handle.db,
      sql`select status, status_reason from side_effects where tenant_id = ${t.tenantId} and task_id = ${a.taskId}`,
    );
    expect(ra!.status).toBe("unknown");
    expect(ra!.status_reason).toContain("approval does not stand");
    const b = await pending(t);
    expect((await decide(approver, b.approvalId, { decision: "approve" })).status).toBe(200);
    await sendEvents(t, [intentEvent(b.taskId, DIGEST)]);
    const [rb] = await queryRows<{ status: string }>(
      handle.db,
      sql`select status from side_effects where tenant_id = ${t.tenantId} and task_id = ${b.taskId}`,
    );
    expect(rb!.status).toBe("in_flight");
    const [used] = await queryRows<{ consumed_at: string | null }>(
      handle.db,
      sql`select consumed_at from approval_requests where id = ${b.approvalId}`,
    );
    expect(used!.consumed_at).not.toBeNull();
  });

  it("a rejection refuses the write and blocks nothing else", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const { taskId, approvalId } = await pending(t);
    expect(
      (await decide(await signInAs(t, "approver"), approvalId, { decision: "reject", reason: "Wrong audience" }))
        .status,
    ).toBe(200);
    const res = await postIntent(t, taskId, intentBody(taskId));
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("approval_rejected");
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("resume");
  });
});

describe("policy version", () => {
  it("a change makes old-bound approvals stale at once, audited and on the task's timeline; re-approval flips the gate", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver", "owner", "viewer"] });
    const { taskId, approvalId } = await pending(t);
    const approver = await signInAs(t, "approver");
    expect((await decide(approver, approvalId, { decision: "approve" })).status).toBe(200);
    const owner = await signInAs(t, "owner");
    // Two stored versions; activating the first keeps the version approvals bind to ("1").
    for (const n of [1, 2])
      expect((await api(owner).post<{ version: number }>("/api/v1/policies", openPolicy(n))).body.version).toBe(n);
    const first = await api(owner).request<{ invalidated: unknown[] }>("POST", "/api/v1/policies/1/activate");
    expect(first.status, first.text).toBe(200);
    expect(first.body.invalidated).toEqual([]);
    // Approvers, viewers and runtime keys may not change it.
    for (const who of [approver, await signInAs(t, "viewer"), t.apiKey])
      expect((await api(who).request("POST", "/api/v1/policies/2/activate")).status).toBe(403);
    const changed = await api(owner).request<{
      version: number;
      previous: number | null;
      invalidated: Array<{ id: string }>;
    }>("POST", "/api/v1/policies/2/activate");
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ version: 2, previous: 1, invalidated: [{ id: approvalId }] });
    expect((await api(owner).get<{ policy_version: string }>("/api/v1/settings/approvals")).body.policy_version).toBe(
      "2",
    );
    expect((await api(t.apiKey).get<{ version: number }>("/api/v1/policies/current")).body.version).toBe(2);
    const view = await api(t.apiKey).get<Approval>(`/api/v1/approvals/${approvalId}`);
    expect(view.body).toMatchObject({ status: "stale", stale_reasons: ["policy_changed"] });
    expect(view.body.changes).toContainEqual({ field: "policy_version", approved: "1", current: "2" });
    const stale = await api(t.apiKey).get<{ approvals: Approval[] }>("/api/v1/approvals?status=stale");
    expect(stale.body.approvals.map((a) => a.id)).toEqual([approvalId]);
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.verdict).toBe("stop");
    expect(gate.body.reasons.map((r) => r.code)).toEqual(["policy_changed", "approval_stale"]);
    const intent = await postIntent(t, taskId, intentBody(taskId));
    expect(intent.status).toBe(403);
    expect(intent.body.error.details).toMatchObject({ status: "stale", stale_reasons: ["policy_changed"] });
    const events = await queryRows<{ type: string }>(
      handle.db,
      sql`select type from events where tenant_id = ${t.tenantId} and task_id = ${taskId} and plane = 'session' order by seq`,
    );
    expect(events.map((e) => e.type)).toEqual(["approval.requested", "approval.decided", "approval.invalidated"]);
    const audit = await queryRows<{ action: string }>(
      handle.db,
      sql`select action from audit_log where tenant_id = ${t.tenantId} and action in ('policy.changed', 'approval.invalidated') order by seq`,
    );
    expect(audit.map((a) => a.action)).toEqual(["policy.changed", "approval.invalidated"]);

    const re = await decide(approver, approvalId, { decision: "approve", reason: "Checked under policy 2" });
    expect(re.status, re.text).toBe(200);
    expect(re.body).toMatchObject({ status: "approved", policy_version: "2", supersedes: approvalId });
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("resume");
    expect((await postIntent(t, taskId, intentBody(taskId))).body.decision).toBe("go");
    // The old binding stays on record; deciding it again is 409.
    expect((await decide(approver, approvalId, { decision: "approve" })).status).toBe(409);
    const verify = await api(approver).get<{ valid: boolean }>("/api/v1/audit/verify");
    expect(verify.body).toMatchObject({ valid: true });
  });
});

describe("tenant walls and reads", () => {
  it("another tenant sees none of it (404), and lists are scoped and keyset-paged", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const other = await createTestTenant(handle.db, { roles: ["approver"] });
    const a = await pending(t);
    const b = await pending(t);
    const outsider = await signInAs(other, "approver");
    expect((await api(outsider).get(`/api/v1/approvals/${a.approvalId}`)).status).toBe(404);
    expect((await api(other.apiKey).get(`/api/v1/approvals/${a.approvalId}`)).status).toBe(404);
    expect((await decide(outsider, a.approvalId, { decision: "approve" })).status).toBe(404);
    expect((await api(outsider).get<{ approvals: Approval[] }>("/api/v1/approvals")).body.approvals).toEqual([]);
    const page1 = await api(t.apiKey).get<{ approvals: Approval[]; next_cursor: string | null }>(
      "/api/v1/approvals?limit=1",
    );
    expect(page1.body.approvals.map((x) => x.id)).toEqual([a.approvalId]);
    const page2 = await api(t.apiKey).get<{ approvals: Approval[]; next_cursor: string | null }>(
      `/api/v1/approvals?limit=1&cursor=${page1.body.next_cursor}`,
    );
    expect(page2.body.approvals.map((x) => x.id)).toEqual([b.approvalId]);
    expect((await api(t.apiKey).get("/api/v1/approvals?status=bogus")).status).toBe(422);
    expect((await api(t.apiKey).get("/api/v1/approvals/not-a-uuid")).status).toBe(404);
  });

  it("audit/verify finds the first entry that does not match the chain", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    await pending(t);
    const me = await signInAs(t, "approver");
    expect((await api(me).get<{ valid: boolean }>("/api/v1/audit/verify")).body.valid).toBe(true);
    // A full key reads the chain too (decision 0048); runtime-only keys are refused by their scope.
    expect((await api(t.apiKey).get<{ valid: boolean }>("/api/v1/audit/verify")).body.valid).toBe(true);
    await handle.db.transaction(async (tx) => {
      await tx.execute(sql`alter table audit_log disable trigger audit_log_no_update_delete`);
      await tx.execute(
        sql`update audit_log set details = '{"tampered": true}'::jsonb where tenant_id = ${t.tenantId} and seq = 1`,
      );
      await tx.execute(sql`alter table audit_log enable trigger audit_log_no_update_delete`);
    });
    const broken = await api(me).get<{ valid: boolean; first_bad_entry: { seq: number } }>("/api/v1/audit/verify");
    expect(broken.body.valid).toBe(false);
    expect(broken.body.first_bad_entry.seq).toBe(1);
  });
});
