/**
 * A team in the browser: an owner invites an approver under Settings → Members and hands over the link; the
 * approver opens it, sets a password, and lands in the dashboard signed in as approver. A viewer sees the members
 * and the permissions table read-only. A person in two workspaces switches between them from the header.
 */
import { ensureMembership } from "@/lib/domain/tenancy/people";
import { createTestTenant } from "../tests/support/tenants";
import { expect, loginAs, rid, test } from "./fixtures";

test("an owner invites an approver; the approver sets a password through the link and signs in as approver", async ({
  page,
  browser,
  tenant,
}, testInfo) => {
  const email = `approver-${rid()}@${tenant.slug}.test`;
  await loginAs(page, tenant.users.owner.email, tenant.password);
  await page.goto("/settings/members");
  const section = page.locator("section#members");
  await expect(section.getByRole("heading", { name: "Members" })).toBeVisible();
  await section.getByLabel("Email of the person to add").fill(email);
  await section.getByLabel("Their role").selectOption("approver");
  await section.getByRole("button", { name: "Create invitation link" }).click();
  const shown = section.getByTestId("invitation-url");
  await expect(shown).toHaveText(/\/invitations\/rci_[A-Za-z0-9_-]{43}$/);
  await expect(section.getByTestId("invitation-created")).toContainText(`Hand this link to ${email} (approver)`);
  await expect(section.getByTestId("invitation-row").filter({ hasText: email })).toContainText("approver");
  const link = (await shown.textContent())!.trim();
  const settingsShot = testInfo.outputPath("members-invited.png");
  await page.screenshot({ path: settingsShot, fullPage: true });
  await testInfo.attach("members-invited.png", { path: settingsShot, contentType: "image/png" });

  const context = await browser.newContext({ baseURL: testInfo.project.use.baseURL });
  try {
    const newcomer = await context.newPage();
    await newcomer.goto(link);
    await expect(newcomer.getByTestId("invitation-summary")).toContainText(`Test tenant ${tenant.slug}`);
    await expect(newcomer.getByTestId("invitation-summary")).toContainText("approver");
    const inviteShot = testInfo.outputPath("invitation-page.png");
    await newcomer.screenshot({ path: inviteShot, fullPage: true });
    await testInfo.attach("invitation-page.png", { path: inviteShot, contentType: "image/png" });

    // A password under the minimum: the page says so before anything is sent.
    const sent: string[] = [];
    newcomer.on("request", (r) => {
      if (r.url().includes("/accept")) sent.push(r.url());
    });
    await newcomer.getByLabel("Choose a password").fill("short");
    await newcomer.getByLabel("Type it again").fill("short");
    await newcomer.getByRole("button", { name: "Set password and join" }).click();
    await expect(newcomer.locator("form").getByRole("alert")).toHaveText(
      /^Choose a password of at least \d+ characters\.$/,
    );
    expect(sent).toEqual([]);

    // Two different passwords: the page says so and sends nothing.
    await newcomer.getByLabel("Choose a password").fill("approver-password-1");
    await newcomer.getByLabel("Type it again").fill("approver-password-2");
    await newcomer.getByRole("button", { name: "Set password and join" }).click();
    await expect(newcomer.locator("form").getByRole("alert")).toHaveText("The two passwords are not the same.");

    await newcomer.getByLabel("Your name").fill("Avery Approver");
    await newcomer.getByLabel("Type it again").fill("approver-password-1");
    await newcomer.getByRole("button", { name: "Set password and join" }).click();
    await newcomer.waitForURL((u) => u.pathname === "/");
    await expect(newcomer.getByTestId("current-user")).toContainText(email);
    await expect(newcomer.getByTestId("current-user")).toContainText("approver");

    // The link worked once.
    await newcomer.goto(link);
    await expect(newcomer.getByTestId("invitation-closed")).toContainText("already used");
  } finally {
    await context.close();
  }

  // The owner's list shows the new member, and the open invitation is gone.
  await page.reload();
  await expect(section.locator(`[data-testid=member-row][data-email="${email}"]`)).toHaveAttribute(
    "data-role",
    "approver",
  );
  await expect(section.getByTestId("invitation-row")).toHaveCount(0);
});

test("an owner changes a role and removes a member after confirming; the audit log names both", async ({
  page,
  tenant,
}) => {
  await loginAs(page, tenant.users.owner.email, tenant.password);
  await page.goto("/settings/members");
  const section = page.locator("section#members");
  const responder = section.locator(`[data-testid=member-row][data-email="${tenant.users.responder.email}"]`);
  const email = tenant.users.responder.email;
  // Cancelling the role change keeps the stored role and sends nothing.
  await responder.getByLabel(`Role of ${email}`).selectOption("approver");
  const ask = page.getByRole("dialog", { name: `Change the role of ${email} from responder to approver?` });
  await ask.getByRole("button", { name: "Cancel" }).click();
  await expect(ask).toBeHidden();
  await expect(responder.getByLabel(`Role of ${email}`)).toHaveValue("responder");
  await responder.getByLabel(`Role of ${email}`).selectOption("approver");
  await ask.getByRole("button", { name: "Make approver" }).click();
  await expect(section.getByRole("status")).toContainText(
    `${tenant.users.responder.email} is now approver (was responder)`,
  );
  await expect(responder).toHaveAttribute("data-role", "approver");

  await responder.getByRole("button", { name: "Remove" }).click();
  const question = page.getByRole("dialog", { name: `Remove ${email} (approver) from this workspace?` });
  await expect(question).toContainText("sessions here end at once");
  await question.getByRole("button", { name: `Remove ${email}` }).click();
  await expect(section.getByRole("status")).toContainText(`Removed ${tenant.users.responder.email}`);
  await expect(responder).toContainText("removed");
  await expect(responder.getByRole("button", { name: "Remove" })).toHaveCount(0);

  // The only owner can be neither demoted nor removed: the page offers neither and says what to do instead.
  const owner = section.locator(`[data-testid=member-row][data-email="${tenant.users.owner.email}"]`);
  await expect(owner).toHaveAttribute("data-role", "owner");
  await expect(owner.getByLabel(`Role of ${tenant.users.owner.email}`)).toHaveCount(0);
  await expect(owner.getByRole("button", { name: "Remove" })).toHaveCount(0);
  await expect(owner.getByTestId("only-owner")).toHaveText("the only owner: make someone else owner first");

  await page.goto("/audit");
  await expect(page.getByTestId("audit-row").filter({ hasText: "member.removed" })).toHaveCount(1);
  await expect(page.getByTestId("audit-row").filter({ hasText: "member.role_changed" })).toHaveCount(1);
});

test("a viewer sees the members and who may do what, read-only", async ({ page, tenant }, testInfo) => {
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto("/settings/members");
  const section = page.locator("section#members");
  await expect(section.getByTestId("member-row")).toHaveCount(5);
  await expect(section.getByTestId("members-read-only")).toContainText("your role here is viewer");
  await expect(section.getByRole("button", { name: "Create invitation link" })).toHaveCount(0);
  await expect(section.getByLabel("Email of the person to add")).toHaveCount(0);
  await expect(section.getByRole("combobox")).toHaveCount(0);
  await expect(section.getByRole("button", { name: "Remove" })).toHaveCount(0);
  await expect(
    section.locator(`[data-testid=member-row][data-email="${tenant.users.owner.email}"]`).getByTestId("member-role"),
  ).toHaveText("owner");

  const matrix = page.getByTestId("permissions-table");
  await expect(matrix).toBeVisible();
  const manage = matrix.locator("tr[data-action='members.manage']");
  await expect(manage.locator("td")).toHaveText([/invite members/, /yes/, /no/, /no/, /no/, /yes/, /no/]);
  const shot = testInfo.outputPath("settings-viewer.png");
  await page.screenshot({ path: shot, fullPage: true });
  await testInfo.attach("settings-viewer.png", { path: shot, contentType: "image/png" });
});

test("a person in two workspaces switches between them from the header", async ({ page, db, tenant }) => {
  const other = await createTestTenant(db.db, { roles: ["owner"] });
  // The tenant's responder is also a viewer of the other workspace.
  await ensureMembership(db.db, other.tenantId, tenant.users.responder.userId, "viewer");
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await expect(page.getByTestId("current-user")).toContainText("responder");
  const switcher = page.getByLabel("Workspace");
  await expect(switcher).toHaveValue(tenant.slug);
  await switcher.selectOption(other.slug);
  await page.waitForURL((u) => u.pathname === "/");
  await expect(page.getByTestId("current-user")).toContainText("viewer");
  await expect(page.getByLabel("Workspace")).toHaveValue(other.slug);

  await page.getByTestId("current-user").click();
  await page.waitForURL(/\/account$/);
  await expect(page.getByRole("heading", { name: "Your account" })).toBeVisible();
  await expect(page.getByTestId("workspace-row")).toHaveCount(2);
  await expect(page.getByTestId("workspace-row").filter({ hasText: other.slug })).toContainText("current");
  await page.getByRole("button", { name: `Switch to Test tenant ${tenant.slug}` }).click();
  await page.waitForURL((u) => u.pathname === "/");
  await expect(page.getByTestId("current-user")).toContainText("responder");
});
