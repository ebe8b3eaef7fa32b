/**
 * The active policy's tool list is an approval rule like Settings' rules (decision 0033), on real PostgreSQL through
 * the HTTP API: a tool the policy marks `requires_approval` needs an approval though the intent does not say so, and
 * the policy's per-tool `approval_ttl` is the approval's lifetime.
 */
import { describe, expect, it } from "vitest";
import { payloadDigestOf } from "../support/approvals";
import { checkpoint, getTask } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import {
  api,
  createTestTenant,
  makeEvent,
  newTaskId,
  postEvents,
  testDbForFile,
  type Auth,
  type TestTenant,
} from "./helpers";

const handle = testDbForFile();
const ARGS = { title: "Q3 custody report" };
const DIGEST = payloadDigestOf("publish_report", ARGS);

type ErrorBody = { error: { code: string; message: string; details?: Record<string, unknown> } };
type Approval = {
  id: string;
  status: string;
  stale_reasons: string[];
  decision?: { decided_at: string; expires_at: string | null };
};

/** An intent for publish_report that does not say it needs approval. */
const intent = (taskId: string) => ({
  idempotency_key: `publish-${taskId}`,
  payload_digest: DIGEST,
  action: "publish_report",
  tool: "publish_report",
  mutation: true,
  attempt: 1,
  payload: ARGS,
});

const postIntent = (t: TestTenant, taskId: string) =>
  api(t.apiKey).post<ErrorBody & { decision?: string }>(
    `/api/v1/tasks/${taskId}/side-effects/publish_report/intent`,
    intent(taskId),
  );

/** Stores a policy whose tool list names publish_report, and activates it; returns its version. */
async function activatePolicy(owner: Auth, tool: Record<string, unknown>): Promise<number> {
  const stored = await api(owner).post<{ version: number }>("/api/v1/policies", {
    network: { access: "open" },
    credentials: [],
    tools: [{ name: "publish_report", mutation: true, ...tool }],
  });
  expect(stored.status, stored.text).toBe(201);
  const activated = await api(owner).request("POST", `/api/v1/policies/${stored.body.version}/activate`);
  expect(activated.status, activated.text).toBe(200);
  return stored.body.version;
}

const hoursOf = (d: { decided_at: string; expires_at: string | null }) =>
  (Date.parse(d.expires_at!) - Date.parse(d.decided_at)) / 3_600_000;

describe("the active policy's tool list is an approval rule", () => {
  it("a policy listing publish_report with requires_approval: true: an intent without the flag needs approval (not go)", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    const taskId = newTaskId("polrule");
    await checkpoint(t, taskId, { side_effects: {} });
    await activatePolicy(owner, { requires_approval: true });
    const res = await postIntent(t, taskId);
    expectError(res, 403, "approval_required");
    expect(res.body.error.details!.approval_id).toEqual(expect.any(String));
  });

  it("the same rule holds on the events path: a reported publish_report write without an approval is not in flight, it becomes unknown", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    const taskId = newTaskId("polrule");
    await checkpoint(t, taskId, { side_effects: {} });
    await activatePolicy(owner, { requires_approval: true });
    const res = await postEvents(t.apiKey, [
      makeEvent(taskId, {
        type: "side_effect.intent",
        occurred_at: new Date().toISOString(),
        attrs: {
          name: "publish_report",
          idempotency_key: `publish-${taskId}`,
          action: "publish_report",
          payload_digest: DIGEST,
        },
      }),
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.results[0]?.effect).toMatchObject({ applied: false, code: "approval_required" });
    expect((await getTask(t.apiKey, taskId)).body.side_effects.publish_report?.status).toBe("unknown");
  });

  it("a policy listing the tool without requires_approval adds no rule", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    const taskId = newTaskId("polrule");
    await checkpoint(t, taskId, { side_effects: {} });
    await activatePolicy(owner, { requires_approval: false });
    const res = await postIntent(t, taskId);
    expect(res.status, res.text).toBe(200);
    expect(res.body.decision).toBe("go");
  });

  it("policy v2 gives publish_report approval_ttl 8h: the re-approval under it expires after 8 h, not the default 24 h", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "approver"] });
    const owner = await signInAs(t, "owner");
    const approver = await signInAs(t, "approver");
    const taskId = newTaskId("polttl");
    await checkpoint(t, taskId, { side_effects: {} });
    await activatePolicy(owner, { requires_approval: true });
    const asked = await postIntent(t, taskId);
    expectError(asked, 403, "approval_required");
    const id = asked.body.error.details!.approval_id as string;
    const first = await api(approver).post<Approval>(`/api/v1/approvals/${id}/decision`, { decision: "approve" });
    expect(first.status, first.text).toBe(200);
    expect(hoursOf(first.body.decision!)).toBeCloseTo(24, 3);

    await activatePolicy(owner, { requires_approval: true, approval_ttl: "8h" });
    const stale = await api(approver).get<Approval>(`/api/v1/approvals/${id}`);
    expect(stale.body.stale_reasons).toContain("policy_changed");
    const again = await api(approver).post<Approval>(`/api/v1/approvals/${id}/decision`, { decision: "approve" });
    expect(again.status, again.text).toBe(200);
    expect(hoursOf(again.body.decision!)).toBeCloseTo(8, 3);
  });
});
