/**
 * Policies in the browser (docs/concepts.md#policy-versions-and-lint): an admin uploads a YAML policy whose credential
 * names a host the sandbox cannot reach, sees the error at its field, stores it (kept, but it cannot be activated),
 * fixes the document, stores and activates it; the task that reached a host the new policy does not admit then shows
 * the gate's `egress_policy_inconsistent` and the drift on its Egress tab. A viewer reads policies but has no Store or
 * Activate.
 */
import { RECORDS_POLICY_YAML } from "../tests/support/policy-document";
import { expect, loginAs, makeEvent, makeRecord, newTaskId, test } from "./fixtures";

/** The suites' records policy (tests/support/policy-document.ts), and the same with its credential's host mistyped. */
const FIXED = RECORDS_POLICY_YAML;
const MISMATCHED = FIXED.replace("allowed_hosts: [records.example.com]", "allowed_hosts: [records.example.org]");

test("an admin fixes a mismatched credential host, activates the policy, and the task's gate follows it", async ({
  page,
  tenant,
  runtime,
}) => {
  test.setTimeout(120_000);
  const taskId = newTaskId("policy-gate");
  await runtime.putRecord(makeRecord(taskId, { phase: "writing", side_effects: {} }));
  await runtime.postEvents([
    makeEvent(taskId, {
      plane: "tools",
      type: "egress.allowed",
      attrs: { host: "records.example.com", port: 443, tool: "update_record", credential_ref: "records-api" },
    }),
    makeEvent(taskId, {
      plane: "tools",
      type: "egress.allowed",
      attrs: { host: "files.example.com", port: 443, tool: "read_file" },
    }),
  ]);

  await loginAs(page, tenant.users.admin.email, tenant.password);
  await page.goto("/policies");
  await expect(page.getByTestId("current-policy")).toContainText("No policy is active yet");
  await expect(page.getByTestId("policies-empty")).toBeVisible();

  // Upload the file, lint: the error sits at its field path.
  await page
    .getByTestId("policy-file")
    .setInputFiles({ name: "policy.yaml", mimeType: "application/yaml", buffer: Buffer.from(MISMATCHED) });
  await expect(page.getByTestId("policy-text")).toHaveValue(MISMATCHED);
  await page.getByRole("button", { name: "Lint", exact: true }).click();
  const finding = page
    .getByTestId("lint-result")
    .locator('[data-testid=finding][data-path="credentials[0].allowed_hosts[0]"]');
  await expect(finding).toContainText("records.example.org");
  await expect(finding).toContainText("add it to network.allowed_domains");

  // Stored anyway: the version shows the finding under its line and offers no Activate.
  await page.getByRole("button", { name: "Store as a new version" }).click();
  await page.waitForURL(/\/policies\?v=1/);
  const lineFinding = page.locator('[data-testid=line-finding][data-path="credentials[0].allowed_hosts[0]"]');
  await expect(lineFinding).toHaveAttribute("data-line", "8");
  await expect(page.getByTestId("policy-source")).toContainText("cannot be activated");
  await expect(page.getByTestId("activate-1")).toHaveCount(0);

  // Fix by pasting the corrected text; it lints clean, is stored as v2 and activated after a confirmation.
  await page.getByTestId("policy-text").fill(FIXED);
  await page.getByRole("button", { name: "Lint", exact: true }).click();
  await expect(page.getByTestId("lint-clean")).toBeVisible();
  await page.getByRole("button", { name: "Store as a new version" }).click();
  await page.waitForURL(/\/policies\?v=2/);
  await expect(page.getByTestId("policy-diff")).toContainText("records.example.com");
  await expect(page.getByTestId("host-removed")).toContainText("records.example.org");
  await page.getByTestId("policy-source").getByTestId("activate-2").click();
  const confirmActivate = page.getByRole("dialog", { name: /^Make v2 the current policy/ });
  await expect(confirmActivate.getByRole("button", { name: "Cancel" })).toBeFocused();
  await confirmActivate.getByRole("button", { name: "Activate v2" }).click();
  await expect(confirmActivate).toBeHidden();
  await expect(page.getByTestId("current-policy")).toContainText("v2");
  await expect(page.locator("[data-testid=policy-row][data-version='2']")).toContainText("current");

  // The task reached files.example.com, which v2 does not admit: the gate stops, the Egress tab shows the drift.
  await page.goto(`/tasks/${taskId}`);
  await expect(page.locator("[data-testid=gate-reason][data-code=egress_policy_inconsistent]")).toContainText(
    "files.example.com",
  );
  await page.getByRole("tab", { name: "Egress and vault" }).click();
  await expect(page.locator("[data-testid=egress-host][data-host='files.example.com']")).toHaveAttribute(
    "data-drift",
    "true",
  );
  await expect(page.locator("[data-testid=egress-host][data-host='records.example.com']")).toContainText("admitted");
});

test("a viewer reads the policies but cannot store or activate", async ({ page, tenant }) => {
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto("/policies");
  await expect(page.getByRole("heading", { name: "Policies", level: 1 })).toBeVisible();
  await expect(page.getByRole("button", { name: "Store as a new version" })).toHaveCount(0);
  await page.getByTestId("policy-text").fill(FIXED);
  await page.getByRole("button", { name: "Lint", exact: true }).click();
  await expect(page.getByTestId("lint-clean")).toBeVisible();
  const res = await page.request.post("/api/v1/policies", {
    headers: { "content-type": "application/yaml" },
    data: FIXED,
  });
  expect(res.status()).toBe(403);
});
