/**
 * One canonical form for action, tool and principal names (decision 0033), on real PostgreSQL through the HTTP API:
 * names are printable ASCII, refused at the boundary otherwise (a Cyrillic `о`, U+2024 `․`, a fullwidth `ｐ`), and
 * compared without case — so a Settings approval rule on `pay.out` is not dodged by `Pay.out`, and a revoked
 * principal's look-alike (another case, another script, fullwidth) does not resume.
 */
import { describe, expect, it } from "vitest";
import type { EventResult } from "@/lib/contract/api";
import { askGate, checkpoint, hex, intentBody, newKey, postIntent } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { errorOf, expectError } from "./support/responses";
import {
  api,
  createTestTenant,
  makeEvent,
  makeRecord,
  newTaskId,
  postEvents,
  testDbForFile,
  type TestTenant,
} from "./helpers";

const handle = testDbForFile();

/** The dodges tried against a rule on `pay.out`: another script, a look-alike dot, a fullwidth letter. */
const LOOKALIKES = ["pay.\u043eut", "pay\u2024out", "\uff50ay.out"];
const PRINCIPAL = "tenant/acme:user/42";
/** Look-alikes of {@link PRINCIPAL}: Cyrillic `а`, fullwidth `２`. */
const PRINCIPAL_LOOKALIKES = ["ten\u0430nt/acme:user/42", "tenant/acme:user/4\uff12"];

async function ruleOnPayOut(t: TestTenant): Promise<void> {
  const owner = await signInAs(t, "owner");
  const res = await api(owner).put("/api/v1/settings/approval-rules/pay.out", { requires_approval: true });
  expect(res.status, res.text).toBe(200);
}

describe("a Settings approval rule holds for every spelling of its action", () => {
  it("a rule on pay.out: Pay.out needs approval; pay.оut (Cyrillic), pay․out (U+2024) and ｐay.out (fullwidth) are refused at the boundary", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    await ruleOnPayOut(t);
    const taskId = newTaskId("canon");
    await checkpoint(t, taskId, { principal: PRINCIPAL });

    const upper = await postIntent(t.apiKey, taskId, "payout", intentBody(newKey(), { action: "Pay.out" }));
    expectError(upper, 403, "approval_required");

    for (const [i, action] of LOOKALIKES.entries()) {
      const res = await postIntent(t.apiKey, taskId, `payout_${i}`, intentBody(newKey(), { action }));
      expectError(res, 422, "validation_failed");
      expect(errorOf(res).message).toMatch(/action must be printable ASCII/);
    }
    // nothing went under any spelling
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.permitted_side_effects).not.toContain("payout_0");
  });

  it("the same look-alikes are refused as a tool name, in a checkpoint's declared effect and in a reported side_effect.intent", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId("canon");
    await checkpoint(t, taskId, { principal: PRINCIPAL });
    const tool = await postIntent(t.apiKey, taskId, "payout", intentBody(newKey(), { tool: LOOKALIKES[2] }));
    expectError(tool, 422, "validation_failed");

    const declared = await api(t.apiKey).put(
      `/api/v1/tasks/${taskId}`,
      makeRecord(taskId, {
        principal: PRINCIPAL,
        side_effects: { payout: { idempotency_key: newKey(), status: "not_started", action: LOOKALIKES[0] } },
      }),
    );
    expect(declared.status, declared.text).toBe(422);

    const reported = await postEvents(t.apiKey, [
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.intent",
        attempt: 1,
        attrs: {
          side_effect: "payout",
          idempotency_key: newKey(),
          payload_digest: hex("a"),
          action: LOOKALIKES[1],
          mutation: true,
        },
      }),
    ]);
    expect(reported.status, reported.text).toBe(200);
    const result = reported.body.results[0] as EventResult;
    expect(result.status).toBe("rejected");
  });

  it("a rule saved as Pay.Out is kept as pay.out, and removing PAY.OUT removes it", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    expect((await api(owner).put("/api/v1/settings/approval-rules/Pay.Out", { requires_approval: true })).status).toBe(
      200,
    );
    const taskId = newTaskId("canon");
    await checkpoint(t, taskId, { principal: PRINCIPAL });
    expectError(
      await postIntent(t.apiKey, taskId, "payout", intentBody(newKey(), { action: "pay.out" })),
      403,
      "approval_required",
    );
    const refused = await api(owner).put(`/api/v1/settings/approval-rules/${encodeURIComponent(LOOKALIKES[0]!)}`, {
      requires_approval: true,
    });
    expect(refused.status, refused.text).toBe(422);
    expect((await api(owner).delete("/api/v1/settings/approval-rules/PAY.OUT")).status).toBeLessThan(300);
    // a task of its own, since the first task waits for the approval its intent asked for
    const fresh = newTaskId("canon");
    await checkpoint(t, fresh, { principal: PRINCIPAL });
    const after = await postIntent(t.apiKey, fresh, "payout", intentBody(newKey(), { action: "pay.out" }));
    expect(after.status, after.text).toBe(200);
  });
});

describe("a revoked principal's look-alike does not resume", () => {
  it("after revoking tenant/acme:user/42, a task under Tenant/ACME:user/42 stops (principal_revoked); the Cyrillic and fullwidth forms are refused", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    const revoke = await api(owner).post("/api/v1/settings/principals/revoke", {
      principal: PRINCIPAL,
      reason: "left the company",
    });
    expect(revoke.status, revoke.text).toBeLessThan(300);

    const upperTask = newTaskId("canon");
    await checkpoint(t, upperTask, { principal: "Tenant/ACME:user/42" });
    const gate = await askGate(t.apiKey, upperTask);
    expect(gate.body.verdict).toBe("stop");
    expect(gate.body.reasons.map((r) => r.code)).toEqual(["principal_revoked"]);
    expectError(await postIntent(t.apiKey, upperTask, "payout", intentBody(newKey())), 403, "principal_revoked");

    for (const principal of PRINCIPAL_LOOKALIKES) {
      const taskId = newTaskId("canon");
      const res = await api(t.apiKey).put(`/api/v1/tasks/${taskId}`, makeRecord(taskId, { principal }));
      expectError(res, 422, "validation_failed");
      expect(errorOf(res).message).toMatch(/principal must be printable ASCII/);
      const created = await postEvents(t.apiKey, [makeEvent(taskId, { type: "task.created", attrs: { principal } })]);
      expect((created.body.results[0] as EventResult).status).toBe("rejected");
    }

    // restoring by another case restores the one revocation
    const restore = await api(owner).post("/api/v1/settings/principals/restore", { principal: "TENANT/acme:user/42" });
    expect(restore.status, restore.text).toBeLessThan(300);
    expect((await askGate(t.apiKey, upperTask)).body.verdict).toBe("resume");
  });
});
