/**
 * Approvals bound to what the tool is (decision 0033), on real PostgreSQL through the HTTP API: what a caller sends to
 * `POST …/resume` can only add reasons to stop, never remove the server's, and a person's ask records nothing; an
 * approval binds its tool's definition digest, a changed definition makes it stale (old and new digest side by side),
 * and the stop for a changed definition ends only when a person accepts the new definition — never by the runtime's
 * own checkpoint carrying it.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { GateVerdict } from "@/lib/contract/api";
import { payloadDigestOf } from "../support/approvals";
import { askGate, checkpoint, hex, sendEvents } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { auditRows } from "./support/stored-rows";
import { api, createTestTenant, makeEvent, newTaskId, testDbForFile, type Auth, type TestTenant } from "./helpers";

const handle = testDbForFile();

const PRINCIPAL = "tenant/acme:user/42";
const D1 = hex("1");
const D2 = hex("2");
const ARGS = { title: "Q3 custody report" };
const DIGEST = payloadDigestOf("publish_report", ARGS);

type ErrorBody = { error: { code: string; message: string; details?: Record<string, unknown> } };
type Approval = {
  id: string;
  status: string;
  stale_reasons: string[];
  changes?: Array<{ field: string; approved: string | null; current: string | null }>;
};

const codes = (v: GateVerdict) => v.reasons.map((r) => r.code);

const intent = (taskId: string, over: Record<string, unknown> = {}) => ({
  idempotency_key: `publish-${taskId}`,
  payload_digest: DIGEST,
  action: "publish_report",
  tool: "publish_report",
  mutation: true,
  attempt: 1,
  requires_approval: true,
  payload: ARGS,
  ...over,
});

const postIntent = (t: TestTenant, taskId: string, body: unknown) =>
  api(t.apiKey).post<ErrorBody & { decision?: string }>(
    `/api/v1/tasks/${taskId}/side-effects/publish_report/intent`,
    body,
  );

const accept = (auth: Auth, taskId: string, tool: string, body: unknown) =>
  api(auth).post<ErrorBody & { definition_digest?: string; previous_digest?: string }>(
    `/api/v1/tasks/${encodeURIComponent(taskId)}/tool-definitions/${encodeURIComponent(tool)}/accept`,
    body,
  );

async function gate(auth: Auth, taskId: string, body: unknown = {}): Promise<GateVerdict> {
  const res = await askGate(auth, taskId, body);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Reports `tool.definition_changed` for `tool` with `digest`. */
async function definitionChanged(t: TestTenant, taskId: string, tool: string, digest: string): Promise<void> {
  await sendEvents(t, [
    makeEvent(taskId, {
      plane: "tools",
      type: "tool.definition_changed",
      occurred_at: new Date().toISOString(),
      attrs: { tool, definition_digest: digest },
    }),
  ]);
}

async function countOf(table: "gate_asks" | "audit_log" | "audit_pending", tenantId: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    handle.db,
    sql`select count(*)::int as n from ${sql.identifier(table)} where tenant_id = ${tenantId}`,
  );
  return row!.n;
}

describe("what a caller sends can only add reasons to stop", () => {
  it("a forged tool_definitions body naming the old digest does not remove the server's tool_definition_changed; the gate and the intent route agree", async () => {
    const t = await createTestTenant(handle.db, { roles: ["viewer"] });
    const taskId = newTaskId("forge");
    await checkpoint(t, taskId, { principal: PRINCIPAL, tool_definitions: { publish_report: D1 } });
    expect((await gate(t.apiKey, taskId)).verdict).toBe("resume");
    // a body can add a reason of its own
    expect(codes(await gate(t.apiKey, taskId, { tool_definitions: { publish_report: hex("3") } }))).toEqual([
      "tool_definition_changed",
    ]);
    await definitionChanged(t, taskId, "publish_report", D2);

    const forged = await gate(t.apiKey, taskId, { tool_definitions: { publish_report: D1 } });
    expect(forged.verdict).toBe("stop");
    expect(codes(forged)).toEqual(["tool_definition_changed"]);
    expect(forged.reasons[0]!.message).toContain(D1);
    expect(forged.reasons[0]!.message).toContain(D2);

    // the intent route answers from the same verdict
    const res = await postIntent(t, taskId, intent(taskId, { requires_approval: undefined, payload: undefined }));
    expectError(res, 409, "gate_stop");
    expect((res.body.error.details!.reasons as Array<{ code: string }>).map((r) => r.code)).toEqual([
      "tool_definition_changed",
    ]);
  });

  it("a viewer's ask with a forged body says stop as the runtime's does, and records nothing (no gate ask, no audit)", async () => {
    const t = await createTestTenant(handle.db, { roles: ["viewer"] });
    const taskId = newTaskId("viewer");
    await checkpoint(t, taskId, { principal: PRINCIPAL, tool_definitions: { publish_report: D1 } });
    await definitionChanged(t, taskId, "publish_report", D2);
    const viewer = await signInAs(t, "viewer");
    const asksBefore = await countOf("gate_asks", t.tenantId);
    const auditBefore = (await countOf("audit_log", t.tenantId)) + (await countOf("audit_pending", t.tenantId));
    const v = await gate(viewer, taskId, { tool_definitions: { publish_report: D1 } });
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual(["tool_definition_changed"]);
    expect(await countOf("gate_asks", t.tenantId)).toBe(asksBefore);
    expect((await countOf("audit_log", t.tenantId)) + (await countOf("audit_pending", t.tenantId))).toBe(auditBefore);
  });
});

describe("approvals bound to the tool's definition", () => {
  it("tool.definition_changed D1 → D2 makes the approval stale (both digests side by side); the runtime's checkpoint carrying D2 does not end the stop; a person's acceptance does, and the write needs re-approval", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver", "responder", "viewer"] });
    const approver = await signInAs(t, "approver");
    const taskId = newTaskId("tooldef");
    await checkpoint(t, taskId, { principal: PRINCIPAL, side_effects: {}, tool_definitions: { publish_report: D1 } });
    const asked = await postIntent(t, taskId, intent(taskId));
    expectError(asked, 403, "approval_required");
    const approvalId = asked.body.error.details!.approval_id as string;
    const decided = await api(approver).post<Approval>(`/api/v1/approvals/${approvalId}/decision`, {
      decision: "approve",
    });
    expect(decided.status, decided.text).toBe(200);

    // the MCP server swaps the tool under the approval
    await definitionChanged(t, taskId, "publish_report", D2);
    let v = await gate(t.apiKey, taskId);
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual(["approval_stale", "tool_definition_changed"]);
    const stale = await api(approver).get<Approval>(`/api/v1/approvals/${approvalId}`);
    expect(stale.body.status).toBe("stale");
    expect(stale.body.stale_reasons).toEqual(["tool_definition_changed"]);
    expect(stale.body.changes).toContainEqual({ field: "tool_definition_digest", approved: D1, current: D2 });

    // the runtime's own next checkpoint carries D2: still a stop, and the old approval authorizes nothing
    await checkpoint(t, taskId, { principal: PRINCIPAL, side_effects: {}, tool_definitions: { publish_report: D2 } });
    v = await gate(t.apiKey, taskId, { tool_definitions: { publish_report: D2 } });
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toContain("tool_definition_changed");
    const refused = await postIntent(t, taskId, intent(taskId));
    expect(refused.status, refused.text).toBeGreaterThanOrEqual(400);
    expect(refused.body.decision).toBeUndefined();

    // who may accept: not the runtime, not a responder or viewer, not another tenant
    expectError(await accept(t.apiKey, taskId, "publish_report", { definition_digest: D2 }), 403, "forbidden");
    expectError(
      await accept(await signInAs(t, "responder"), taskId, "publish_report", { definition_digest: D2 }),
      403,
      "forbidden",
    );
    expectError(
      await accept(await signInAs(t, "viewer"), taskId, "publish_report", { definition_digest: D2 }),
      403,
      "forbidden",
    );
    const other = await createTestTenant(handle.db, { roles: ["approver"] });
    expectError(
      await accept(await signInAs(other, "approver"), taskId, "publish_report", { definition_digest: D2 }),
      404,
      "not_found",
    );
    // the digest accepted must be the one the server received last
    expectError(await accept(approver, taskId, "publish_report", { definition_digest: hex("9") }), 409, "conflict");
    expect(codes(await gate(t.apiKey, taskId))).toContain("tool_definition_changed");

    const ok = await accept(approver, taskId, "publish_report", { definition_digest: D2 });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ definition_digest: D2, previous_digest: D1 });
    const audit = await auditRows(handle.db, t.tenantId, "tool_definition.accepted");
    expect(audit).toHaveLength(1);
    expect(audit[0]!.details).toMatchObject({ tool: "publish_report", previous_digest: D1, definition_digest: D2 });
    // accepting again: nothing changed since
    expectError(await accept(approver, taskId, "publish_report", { definition_digest: D2 }), 409, "conflict");

    // the tool stop has ended; the approval given under D1 is still stale until re-approved against D2
    v = await gate(t.apiKey, taskId);
    expect(codes(v)).toEqual(["approval_stale"]);
    const reapproved = await api(approver).post<Approval>(`/api/v1/approvals/${approvalId}/decision`, {
      decision: "approve",
    });
    expect(reapproved.status, reapproved.text).toBe(200);
    expect((await gate(t.apiKey, taskId)).verdict).toBe("resume");
    const goes = await postIntent(t, taskId, intent(taskId));
    expect(goes.status, goes.text).toBe(200);
    expect(goes.body.decision).toBe("go");

    // a later change stops again
    await definitionChanged(t, taskId, "publish_report", hex("4"));
    expect(codes(await gate(t.apiKey, taskId))).toEqual(["tool_definition_changed"]);
  });
});

describe("approvals bound to where the write goes and how sensitive its inputs are", () => {
  it("an intent declaring another destination than the approval's makes it stale (destination_changed, both values); a reclassified input does too (classification_changed)", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const approver = await signInAs(t, "approver");
    const taskId = newTaskId("dest");
    const inputs = [{ ref: "s3://in/q3.csv", sha256: hex("a"), classification: "internal" as const }];
    await checkpoint(t, taskId, { principal: PRINCIPAL, side_effects: {}, inputs });
    const asked = await postIntent(t, taskId, intent(taskId, { destination_hosts: ["Reports.Example.com"] }));
    expectError(asked, 403, "approval_required");
    const id = asked.body.error.details!.approval_id as string;
    expect((await api(approver).post(`/api/v1/approvals/${id}/decision`, { decision: "approve" })).status).toBe(200);

    // the runtime now sends the same payload elsewhere
    const elsewhere = await postIntent(t, taskId, intent(taskId, { destination_hosts: ["paste.example.net"] }));
    expect(elsewhere.status, elsewhere.text).toBe(403);
    expect(elsewhere.body.decision).toBeUndefined();
    let view = await api(approver).get<Approval>(`/api/v1/approvals/${id}`);
    expect(view.body.stale_reasons).toEqual(["destination_changed"]);
    expect(view.body.changes).toContainEqual({
      field: "destination_hosts",
      approved: "reports.example.com",
      current: "paste.example.net",
    });
    const gate1 = await gate(t.apiKey, taskId);
    expect(codes(gate1)).toEqual(["approval_stale"]);
    expect(gate1.reasons[0]!.message).toContain("the hosts the write reaches changed");

    // a checkpoint reclassifies the input
    await checkpoint(t, taskId, {
      principal: PRINCIPAL,
      side_effects: {},
      inputs: [{ ...inputs[0]!, classification: "restricted" }],
    });
    view = await api(approver).get<Approval>(`/api/v1/approvals/${id}`);
    expect(view.body.stale_reasons).toEqual(["destination_changed", "classification_changed"]);
    expect(view.body.changes).toContainEqual({
      field: "input_classification",
      approved: "internal",
      current: "restricted",
    });

    // re-approved against what is now declared, the write to the original destination is refused, the new one goes
    const again = await api(approver).post<Approval>(`/api/v1/approvals/${id}/decision`, { decision: "approve" });
    expect(again.status, again.text).toBe(200);
    const back = await postIntent(t, taskId, intent(taskId, { destination_hosts: ["reports.example.com"] }));
    expect(back.status, back.text).toBe(403);
    const goes = await postIntent(t, taskId, intent(taskId, { destination_hosts: ["paste.example.net"] }));
    expect(goes.status, goes.text).toBe(200);
  });
});

describe("what the pages say", () => {
  it("an approval requested without a payload says so on its page; a changed tool offers an approver the accept button on the task page", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const approver = await signInAs(t, "approver");
    const taskId = newTaskId("pages");
    await checkpoint(t, taskId, { principal: PRINCIPAL, side_effects: {}, tool_definitions: { publish_report: D1 } });
    const asked = await postIntent(t, taskId, intent(taskId, { payload: undefined }));
    expectError(asked, 403, "approval_required");
    const page = await api(approver).get(`/approvals/${asked.body.error.details!.approval_id as string}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-testid="digest-only-note"');
    expect(page.text).toContain("The runtime sent only a digest");

    await definitionChanged(t, taskId, "publish_report", D2);
    const task = await api(approver).get(`/tasks/${taskId}`);
    expect(task.status).toBe(200);
    expect(task.text).toContain('data-testid="accept-tool-definition"');
  });
});
