/**
 * Spending limits (decision 0033), on real PostgreSQL through the HTTP API: the active policy gives an action a limit
 * per principal and period; an intent declares its amount and currency; a write over what remains needs an approval,
 * and an approval for an amount never covers a larger one.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkpoint, newKey } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { api, createTestTenant, newTaskId, testDbForFile, type Auth, type TestTenant } from "./helpers";

const handle = testDbForFile();
const PRINCIPAL = "tenant/acme:user/7";

type ErrorBody = { error: { code: string; message: string; details?: Record<string, unknown> } };
type Approval = {
  status: string;
  stale_reasons: string[];
  changes?: Array<{ field: string; approved: string | null; current: string | null }>;
};

const pay = (key: string, amount: number, over: Record<string, unknown> = {}) => ({
  idempotency_key: key,
  payload_digest: createHash("sha256").update(key).digest("hex"),
  action: "pay.out",
  tool: "pay_out",
  mutation: true,
  attempt: 1,
  amount,
  currency: "EUR",
  ...over,
});

const intent = (t: TestTenant, taskId: string, name: string, body: unknown) =>
  api(t.apiKey).post<ErrorBody & { decision?: string }>(`/api/v1/tasks/${taskId}/side-effects/${name}/intent`, body);

async function limitPolicy(owner: Auth): Promise<void> {
  const stored = await api(owner).post<{ version: number }>("/api/v1/policies", {
    network: { access: "open" },
    credentials: [],
    tools: [{ name: "pay_out", mutation: true, requires_approval: false }],
    spending_limits: [{ action: "pay.out", amount: 100, currency: "EUR", period: "1d" }],
  });
  expect(stored.status, stored.text).toBe(201);
  const activated = await api(owner).request("POST", `/api/v1/policies/${stored.body.version}/activate`);
  expect(activated.status, activated.text).toBe(200);
}

describe("spending limits per principal and period", () => {
  it("a write over what remains of the principal's limit needs an approval, across tasks; an approval for 50 EUR does not cover 80 EUR", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "approver"] });
    const owner = await signInAs(t, "owner");
    const approver = await signInAs(t, "approver");
    await limitPolicy(owner);
    const first = newTaskId("spend");
    const second = newTaskId("spend");
    await checkpoint(t, first, { principal: PRINCIPAL, side_effects: {} });
    await checkpoint(t, second, { principal: PRINCIPAL, side_effects: {} });

    // 70 of 100 spent on the first task
    const a = await intent(t, first, "pay_a", pay(newKey(), 70));
    expect(a.status, a.text).toBe(200);
    // 30 remain: 20 goes, on another task of the same principal
    const b = await intent(t, second, "pay_b", pay(newKey(), 20));
    expect(b.status, b.text).toBe(200);
    // 10 remain: 50 needs an approval
    const c = await intent(t, second, "pay_c", pay("pay-c-key-1", 50));
    expectError(c, 403, "approval_required");
    const id = c.body.error.details!.approval_id as string;
    expect((await api(approver).post(`/api/v1/approvals/${id}/decision`, { decision: "approve" })).status).toBe(200);

    // the same write asking for more than was approved: the approval does not cover it
    const more = await intent(t, second, "pay_c", pay("pay-c-key-1", 80));
    expect(more.status, more.text).toBeGreaterThanOrEqual(400);
    expect(more.body.decision).toBeUndefined();
    const view = await api(approver).get<Approval>(`/api/v1/approvals/${id}`);
    expect(view.body.stale_reasons).toContain("amount_exceeded");
    expect(view.body.changes).toContainEqual({ field: "amount", approved: "50 EUR", current: "80 EUR" });

    // the approved amount goes
    const approved = await intent(t, second, "pay_c", pay("pay-c-key-1", 50));
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body.decision).toBe("go");
  });

  it("a write without an amount, another currency, or another principal is not held by the limit", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    await limitPolicy(owner);
    const taskId = newTaskId("spend");
    await checkpoint(t, taskId, { principal: PRINCIPAL, side_effects: {} });
    expect((await intent(t, taskId, "big", pay(newKey(), 100))).status).toBe(200);
    expect((await intent(t, taskId, "usd", pay(newKey(), 500, { currency: "USD" }))).status).toBe(200);
    const other = newTaskId("spend");
    await checkpoint(t, other, { principal: "tenant/acme:user/8", side_effects: {} });
    expect((await intent(t, other, "theirs", pay(newKey(), 90))).status).toBe(200);
    expectError(await intent(t, taskId, "half", pay(newKey(), 5, { currency: undefined })), 422, "validation_failed");
    expectError(await intent(t, taskId, "over", pay(newKey(), 1)), 403, "approval_required");
  });
});
