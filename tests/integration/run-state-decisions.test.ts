/**
 * Imported run states keep their decisions (decision 0032), over the real HTTP API on PostgreSQL, from the real Python
 * SDK sample paused on a pending approval (`historical_approval`, call `historical-approval-1`):
 * - a rejection the state's `context.approvals` records imports as rejected, never as a pending request an approver
 *   could then approve;
 * - an approval the state records is shown as the runtime's record and is not an approval here (the request stays
 *   pending, marked);
 * - malformed decision shapes and a call both executed and pending approval are refused with 422 naming the item, and
 *   write nothing.
 */
import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { ApprovalView } from "@/lib/domain/approvals/read";
import { checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { api, createTestTenant, newTaskId, testDbForFile, type Auth } from "./helpers";

const handle = testDbForFile();
const SAMPLE = fs.readFileSync(
  path.join("/work/shared/fixtures/real/openai-agents-python", "v1_13_pending_tool_approval.json"),
  "utf8",
);
const TOOL = "historical_approval";
const CALL = "historical-approval-1";

type ImportAnswer = {
  approvals: string[];
  runtime_decisions: Array<{ approval_id: string; call_id: string; decision: string }>;
};

/** The sample with its context's approvals replaced (and any other change). */
function stateWith(approvals: unknown, change: (s: Record<string, unknown>) => void = () => {}) {
  const s = JSON.parse(SAMPLE) as Record<string, unknown> & { context: Record<string, unknown> };
  s.context.approvals = approvals;
  change(s);
  return s;
}

const importState = (auth: Auth, taskId: string, state: unknown) =>
  api(auth).post<ImportAnswer>(`/api/v1/import/openai-agents/run-state?task_id=${encodeURIComponent(taskId)}`, state);

async function requests(tenantId: string): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    handle.db,
    sql`select count(*)::int as n from approval_requests where tenant_id = ${tenantId}`,
  );
  return r!.n;
}

describe("imported run states keep their decisions", () => {
  it("a rejection the state records imports as rejected, and an approver cannot then approve it", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("rs-rejected");
    await checkpoint(t, taskId);
    const res = await importState(t.apiKey, taskId, stateWith({ [TOOL]: { approved: [], rejected: [CALL] } }));
    expect(res.status, res.text).toBe(200);
    const [id] = res.body.approvals;
    expect(res.body.runtime_decisions).toEqual([{ approval_id: id, call_id: CALL, decision: "rejected" }]);
    const approver = await signInAs(t, "approver");
    const view = await api(approver).get<ApprovalView>(`/api/v1/approvals/${id}`);
    expect(view.body).toMatchObject({ status: "rejected", runtime_decision: "rejected" });
    expectError(
      await api(approver).post(`/api/v1/approvals/${id}/decision`, { decision: "approve" }),
      409,
      "already_decided",
    );
    // A repeated import keeps it so, and records nothing new.
    const again = await importState(t.apiKey, taskId, stateWith({ [TOOL]: { approved: [], rejected: [CALL] } }));
    expect(again.body.approvals).toEqual([id]);
    expect(again.body.runtime_decisions).toEqual([]);
  });

  it("a whole-tool rejection (rejected: true) rejects the call too", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("rs-rejected-all");
    await checkpoint(t, taskId);
    const res = await importState(t.apiKey, taskId, stateWith({ [TOOL]: { approved: false, rejected: true } }));
    expect(res.status, res.text).toBe(200);
    expect(res.body.runtime_decisions).toMatchObject([{ decision: "rejected" }]);
    const view = await api(t.apiKey).get<ApprovalView>(`/api/v1/approvals/${res.body.approvals[0]}`);
    expect(view.body.status).toBe("rejected");
  });

  it("an approval the state records is shown as the runtime's and is not an approval here", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("rs-approved");
    await checkpoint(t, taskId);
    const res = await importState(t.apiKey, taskId, stateWith({ [TOOL]: { approved: [CALL], rejected: [] } }));
    expect(res.status, res.text).toBe(200);
    expect(res.body.runtime_decisions).toMatchObject([{ call_id: CALL, decision: "approved" }]);
    const view = await api(t.apiKey).get<ApprovalView>(`/api/v1/approvals/${res.body.approvals[0]}`);
    expect(view.body).toMatchObject({ status: "pending", runtime_decision: "approved" });
    expect(view.body.decision).toBeUndefined();
  });

  it.each([
    ["approved is text", { [TOOL]: { approved: "yes", rejected: [] } }, `context.approvals["${TOOL}"].approved`],
    ["a call id is not text", { [TOOL]: { approved: [], rejected: [7] } }, `context.approvals["${TOOL}"].rejected[0]`],
    ["a record is a list", { [TOOL]: [CALL] }, `context.approvals["${TOOL}"]`],
    ["the approvals are a list", [CALL], "context.approvals"],
    [
      "one call both approved and rejected",
      { [TOOL]: { approved: [CALL], rejected: [CALL] } },
      `context.approvals["${TOOL}"]`,
    ],
  ])("a malformed decision (%s) is refused with 422 naming the item, writing nothing", async (_, approvals, at) => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("rs-malformed");
    await checkpoint(t, taskId);
    const res = await importState(t.apiKey, taskId, stateWith(approvals));
    expectError(res, 422, "invalid_run_state");
    expect(res.body).toMatchObject({
      error: { details: { problem: "malformed_decision", fields: [{ path: at }] } },
    });
    expect(await requests(t.tenantId)).toBe(0);
  });

  it("a call both executed and pending approval is refused with 422 naming the item", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("rs-executed");
    await checkpoint(t, taskId);
    const state = stateWith({}, (s) => {
      (s.generated_items as unknown[]).push({
        type: "tool_call_output_item",
        agent: { name: "compat-agent" },
        raw_item: { type: "function_call_output", call_id: CALL, output: "done" },
        output: "done",
      });
    });
    const res = await importState(t.apiKey, taskId, state);
    expectError(res, 422, "invalid_run_state");
    expect(res.body).toMatchObject({
      error: {
        details: { problem: "conflicting_call", fields: [{ path: "current_step.data.interruptions[0]" }] },
      },
    });
    expect(await requests(t.tenantId)).toBe(0);
  });
});
