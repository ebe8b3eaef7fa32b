/**
 * One state per write (issue 24), over HTTP against the built server: the task's side effects
 * (`GET /api/v1/tasks/{id}`, the Side effects tab's data), the approval (`GET /api/v1/approvals/{id}`), the resume
 * gate's reasons and the attention queue all read a write's approval from the same standing. Tried: a stale approval
 * read "approved" on the task while the gate and Approvals said stale; a rejected one read "awaiting approval" on the
 * task and in Attention while Approvals said rejected, and the gate never mentioned it.
 */
import { describe, expect, it } from "vitest";
import type { GateVerdict, TaskView } from "@/lib/contract/api";
import { shownWriteStatus } from "@/lib/domain/approvals/write-state";
import { attentionQueue } from "@/lib/domain/tasks/attention";
import type { UserActor } from "@/lib/domain/authz";
import { payloadDigestOf } from "../support/approvals";
import { openPolicy } from "../support/policy-document";
import { askGate, checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { serverSigningKey } from "./support/seeding";
import { api, createTestTenant, newTaskId, testDbForFile, type Auth, type TestTenant } from "./helpers";

const handle = testDbForFile();
const ARGS = { title: "Q3 custody report", recipients: ["board@example.com"] };

const intentBody = (taskId: string) => ({
  idempotency_key: `publish-${taskId}`,
  payload_digest: payloadDigestOf("publish_report", ARGS),
  action: "publish_report",
  tool: "publish_report",
  mutation: true,
  attempt: 1,
  requires_approval: true,
  payload: ARGS,
  agent: "reporter",
  agent_version: "1.0.0",
});

async function pending(t: TestTenant): Promise<{ taskId: string; approvalId: string }> {
  const taskId = newTaskId("one-state");
  await checkpoint(t, taskId, { side_effects: {} });
  const res = await api(t.apiKey).post<{ error: { code: string; details: { approval_id: string } } }>(
    `/api/v1/tasks/${taskId}/side-effects/publish_report/intent`,
    intentBody(taskId),
  );
  expect(res.status, res.text).toBe(403);
  return { taskId, approvalId: res.body.error.details.approval_id };
}

const decide = (auth: Auth, id: string, body: unknown) => api(auth).post(`/api/v1/approvals/${id}/decision`, body);

/** Every page's reading of the write: the task's effect, the approval, the gate, the attention queue. */
async function readings(t: TestTenant, viewer: Auth, taskId: string, approvalId: string) {
  const task = (await api(viewer).get<TaskView>(`/api/v1/tasks/${taskId}`)).body;
  const effect = task.side_effects.publish_report!;
  const approval = (
    await api(viewer).get<{ status: string; stale_reasons: string[] }>(`/api/v1/approvals/${approvalId}`)
  ).body;
  const gate = (await askGate(t.apiKey, taskId)).body as GateVerdict;
  const v = t.users.viewer!;
  const actor: UserActor = { kind: "user", tenantId: t.tenantId, userId: v.userId, email: v.email, role: "viewer" };
  const attention = (await attentionQueue({ db: handle.db, actor, signingKey: serverSigningKey() })).filter(
    (i) => i.task_id === taskId,
  );
  return { effect, shown: shownWriteStatus(effect.status, effect.approval), approval, gate, attention };
}

describe("one state per write", () => {
  it("a stale approval reads stale on the task, on Approvals, at the gate and in Attention", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver", "owner", "viewer"] });
    const { taskId, approvalId } = await pending(t);
    expect((await decide(await signInAs(t, "approver"), approvalId, { decision: "approve" })).status).toBe(200);
    const owner = await signInAs(t, "owner");
    for (const n of [1, 2]) expect((await api(owner).post("/api/v1/policies", openPolicy(n))).status).toBeLessThan(300);
    expect((await api(owner).request("POST", "/api/v1/policies/1/activate")).status).toBe(200);
    expect((await api(owner).request("POST", "/api/v1/policies/2/activate")).status).toBe(200);

    const r = await readings(t, await signInAs(t, "viewer"), taskId, approvalId);
    expect(r.approval.status).toBe("stale");
    expect(r.effect.approval).toMatchObject({ id: approvalId, state: "stale", stale_reasons: ["policy_changed"] });
    expect(r.shown).toBe("approval_stale");
    expect(r.gate.reasons.map((x) => x.code)).toContain("approval_stale");
    expect(r.attention.map((i) => i.kind)).toEqual(["approval_stale"]);
  });

  it("a rejected approval reads rejected on the task, on Approvals, at the gate (a notice) and in Attention", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver", "viewer"] });
    const { taskId, approvalId } = await pending(t);
    expect(
      (await decide(await signInAs(t, "approver"), approvalId, { decision: "reject", reason: "Wrong audience" }))
        .status,
    ).toBe(200);

    const r = await readings(t, await signInAs(t, "viewer"), taskId, approvalId);
    expect(r.approval.status).toBe("rejected");
    expect(r.effect.status).toBe("awaiting_approval");
    expect(r.effect.approval).toMatchObject({ id: approvalId, state: "rejected", reason: "Wrong audience" });
    expect(r.shown).toBe("approval_rejected");
    // The gate says so, and blocks nothing else (the intent route refuses the write itself).
    expect(r.gate.verdict).toBe("resume");
    expect(r.gate.reasons).toEqual([
      expect.objectContaining({
        code: "approval_rejected",
        target: `/approvals/${approvalId}`,
        message: expect.stringContaining("Wrong audience"),
      }),
    ]);
    expect(r.attention).toEqual([
      expect.objectContaining({ kind: "approval_rejected", approval_id: approvalId, reason: "Wrong audience" }),
    ]);
  });
});
