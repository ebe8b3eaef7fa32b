/**
 * The attention queue (`/`, lib/domain/tasks/attention.ts): unknown side effects, runs of a revoked principal
 * that have not ended, and side effects awaiting approval — each saying what is wrong and linking to the task —
 * through the page's data source and the rendered page; a tenant with nothing to do sees the empty state.
 */
import { describe, expect, it } from "vitest";
import type { UserActor } from "@/lib/domain/authz";
import { attentionQueue, type AttentionItem } from "@/lib/domain/tasks/attention";
import { checkpoint, newKey } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { serverSigningKey, unknownEffect } from "./support/seeding";
import { api, baseUrl, createTestTenant, newTaskId, type TestTenant, testDbForFile } from "./helpers";

const handle = testDbForFile();

function viewerOf(t: TestTenant): UserActor {
  const v = t.users.viewer!;
  return { kind: "user", tenantId: t.tenantId, userId: v.userId, email: v.email, role: "viewer" };
}

async function page(cookie: { cookie: string }): Promise<string> {
  const res = await fetch(`${baseUrl()}/`, { headers: { cookie: cookie.cookie } });
  expect(res.status).toBe(200);
  return res.text();
}

describe("the attention queue", () => {
  it("is empty, with the empty state on the page, when nothing waits", async () => {
    const t = await createTestTenant(handle.db, { roles: ["viewer"] });
    // An ordinary running task with a settled effect is not a reason to look.
    await checkpoint(t, newTaskId(), {
      side_effects: { update_record: { idempotency_key: newKey(), status: "not_started" } },
    });
    expect(await attentionQueue({ db: handle.db, actor: viewerOf(t), signingKey: serverSigningKey() })).toEqual([]);
    const html = await page(await signInAs(t, "viewer"));
    expect(html).toContain('data-testid="attention-empty"');
    expect(html).not.toContain('data-testid="attention-item"');
  });

  it("lists unknown effects, live runs of a revoked principal and effects awaiting approval, each saying why with a link", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "viewer"] });
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const revoked = `tenant/acme:user/gone-${newKey()}`;
    const kept = `tenant/acme:user/kept-${newKey()}`;

    const live = newTaskId("live");
    const done = newTaskId("done");
    const cancelled = newTaskId("cancelled");
    const failed = newTaskId("failed");
    const otherPrincipal = newTaskId("kept");
    await checkpoint(t, live, { principal: revoked, phase: "record_updated" });
    await checkpoint(t, done, { principal: revoked, phase: "done" });
    await checkpoint(t, cancelled, { principal: revoked, phase: "Cancelled" });
    await checkpoint(t, failed, { principal: revoked, phase: "failed" });
    await checkpoint(t, otherPrincipal, { principal: kept, phase: "reading" });
    // The same principal and a live task in another tenant, revoked there: not ours to see.
    const foreign = newTaskId("foreign");
    await checkpoint(other, foreign, { principal: revoked, phase: "reading" });

    const waiting = newTaskId("waiting");
    const waitingKey = newKey();
    await checkpoint(t, waiting, {
      principal: kept,
      side_effects: {
        publish_report: { idempotency_key: waitingKey, status: "awaiting_approval", action: "reports.publish" },
      },
    });
    const endedWaiting = newTaskId("ended-waiting");
    await checkpoint(t, endedWaiting, {
      principal: kept,
      phase: "done",
      side_effects: { publish_report: { idempotency_key: newKey(), status: "awaiting_approval" } },
    });
    const unsure = newTaskId("unsure");
    const unsureKey = newKey();
    await checkpoint(t, unsure, {
      principal: kept,
      side_effects: { update_record: { idempotency_key: unsureKey, status: "in_flight" } },
    });

    const owner = await signInAs(t, "owner");
    const revoke = await api(owner).post("/api/v1/settings/principals/revoke", {
      principal: revoked,
      reason: "left the company",
    });
    expect(revoke.status, revoke.text).toBe(200);
    const otherOwner = await signInAs(other, "owner");
    expect(
      (
        await api(otherOwner).post("/api/v1/settings/principals/revoke", {
          principal: revoked,
          reason: "elsewhere too",
        })
      ).status,
    ).toBe(200);

    const items = await attentionQueue({ db: handle.db, actor: viewerOf(t), signingKey: serverSigningKey() });
    expect(items.map((i) => [i.kind, i.task_id])).toEqual([
      ["side_effect_unknown", unsure],
      ["principal_revoked", live],
      ["side_effect_awaiting_approval", waiting],
    ]);
    const [unknownItem, revokedItem, waitingItem] = items as [
      Extract<AttentionItem, { kind: "side_effect_unknown" }>,
      Extract<AttentionItem, { kind: "principal_revoked" }>,
      Extract<AttentionItem, { kind: "side_effect_awaiting_approval" }>,
    ];
    expect(unknownItem).toMatchObject({
      side_effect: "update_record",
      idempotency_key: unsureKey,
      href: `/tasks/${unsure}?tab=side-effects&effect=update_record`,
    });
    expect(unknownItem.why).toContain("outcome not recorded");
    expect(revokedItem).toMatchObject({
      principal: revoked,
      phase: "record_updated",
      reason: "left the company",
      revoked_by: t.users.owner!.email,
      href: `/tasks/${live}`,
      since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(revokedItem.why).toContain(`acts for ${revoked}, whose authority was revoked`);
    expect(revokedItem.why).toContain("left the company");
    expect(waitingItem).toMatchObject({
      side_effect: "publish_report",
      idempotency_key: waitingKey,
      action: "reports.publish",
      // The checkpoint's declaration became an approval request: the item links to it.
      href: expect.stringMatching(/^\/approvals\/[0-9a-f-]{36}$/),
    });
    expect(waitingItem.why).toContain("waits for a fresh approval");

    // The page renders the same items, each with its link.
    const html = await page(await signInAs(t, "viewer"));
    expect(html).not.toContain('data-testid="attention-empty"');
    expect(html.match(/data-testid="attention-item"/g)).toHaveLength(3);
    expect(html).toContain(`data-kind="principal_revoked" data-task="${live}"`);
    expect(html).toContain(`href="/tasks/${live}"`);
    expect(html).toContain(`data-kind="side_effect_awaiting_approval" data-task="${waiting}"`);
    expect(html).toContain(`href="${waitingItem.href}"`);
    expect(html).toContain("principal revoked");
    expect(html).toContain("awaiting approval");
    for (const hidden of [done, cancelled, failed, otherPrincipal, endedWaiting, foreign])
      expect(html).not.toContain(hidden);

    // Restoring the principal takes its runs out of the queue.
    expect((await api(owner).post("/api/v1/settings/principals/restore", { principal: revoked })).status).toBe(200);
    expect(
      (await attentionQueue({ db: handle.db, actor: viewerOf(t), signingKey: serverSigningKey() })).map((i) => i.kind),
    ).toEqual(["side_effect_unknown", "side_effect_awaiting_approval"]);
  });

  it("keeps a run that ended (phase done) with an unknown write, and its page does not say nothing is waiting", async () => {
    const t = await createTestTenant(handle.db, { roles: ["viewer"] });
    const { taskId, name } = await unknownEffect(handle.db, t);
    await checkpoint(t, taskId, { phase: "done" });
    const items = await attentionQueue({ db: handle.db, actor: viewerOf(t), signingKey: serverSigningKey() });
    expect(items).toContainEqual(
      expect.objectContaining({ kind: "side_effect_unknown", task_id: taskId, side_effect: name }),
    );
    const viewer = await signInAs(t, "viewer");
    expect(await page(viewer)).toContain(`data-task="${taskId}"`);

    const taskPage = await api(viewer).get(`/tasks/${taskId}`);
    expect(taskPage.status).toBe(200);
    expect(taskPage.text).not.toContain("nothing is waiting on the gate");
    expect(taskPage.text).toContain('data-state="ended-unresolved"');
    expect(taskPage.text).toContain("whose outcome is unknown");
  });
});
