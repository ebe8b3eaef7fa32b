/**
 * Accessibility (docs/screens.md#forms-and-actions): axe-core finds no WCAG 2 A/AA violation on any page of the app
 * (e2e/a11y-pages.ts), including the task page with each tab open, an event selected, and the reconcile dialog open.
 * One test per role (one sign-in), one step per page; every page is checked even when an earlier one fails.
 */
import type { Role } from "@/db/schema/enums";
import { expectNoA11yViolations } from "./a11y";
import { A11Y_PAGES, type A11yContext } from "./a11y-pages";
import { createExercise } from "@/lib/domain/exercises/create";
import { createMap } from "@/lib/domain/maps/create";
import { inviteMember } from "@/lib/domain/tenancy/invitations";
import { seedStaleApproval } from "../tests/support/approvals";
import { expect, loginAs, makeRecord, newTaskId, rid, seedIncidentTask, test } from "./fixtures";

const roles = [...new Set(A11Y_PAGES.map((p) => p.as))];

for (const role of roles) {
  const entries = A11Y_PAGES.filter((p) => p.as === role);
  test(`no accessibility violations ${role === null ? "signed out" : `as ${role}`}: ${entries.map((e) => e.name).join("; ")}`, async ({
    page,
    tenant,
    runtime,
    db,
  }) => {
    test.setTimeout(60_000 + entries.length * 30_000);
    const incident = await seedIncidentTask(runtime, newTaskId("a11y"));
    // A second checkpoint, from the second sandbox (attempt 2), so the checkpoints tab shows a diff.
    await runtime.putRecord(
      makeRecord(incident.taskId, {
        phase: "report_drafted",
        policy_version: "policy-v1",
        attempt: 2,
        side_effects: {},
      }),
    );
    // A custody map with an exercise, and an open invitation (seeded as the workspace's owner).
    const owner = {
      kind: "user" as const,
      tenantId: tenant.tenantId,
      userId: tenant.users.owner.userId,
      email: tenant.users.owner.email,
      role: "owner" as const,
    };
    const map = await createMap(
      { db: db.db, actor: owner },
      {
        body: {
          workflow: "document-processing",
          title: "Custody map for document processing",
        },
      },
    );
    const exercise = await createExercise(
      { db: db.db, actor: owner },
      { mapId: map.id, body: { interruption_point: "after_external_write" } },
    );
    const invitation = await inviteMember(
      { db: db.db, actor: owner },
      { body: { email: `invitee-${rid()}@a11y.test`, role: "approver" }, baseUrl: "http://localhost" },
    );
    const approvalId = await seedStaleApproval(db.db, tenant, incident.taskId, process.env.E2E_SIGNING_KEY!);
    const context: A11yContext = {
      taskId: incident.taskId,
      effect: incident.effect,
      eventId: incident.interruptionId,
      mapId: map.id,
      exerciseId: exercise.id,
      invitationToken: invitation.invitation_url.split("/").pop()!,
      approvalId,
    };
    if (role !== null) await loginAs(page, tenant.users[role as Role].email, tenant.password);
    for (const entry of entries) {
      await test.step(entry.name, async () => {
        const res = await page.goto(entry.path(context));
        expect.soft(res?.status(), `status of ${entry.name}`).toBe(entry.status ?? 200);
        await entry.ready(page, context);
        await expectNoA11yViolations(page, { label: entry.name, soft: true });
      });
    }
  });
}
