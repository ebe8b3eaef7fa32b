/**
 * The Egress and vault tab's counts add up (issue 24, decision 0050), in Chromium against the built server, at 1366 and
 * 420 px with axe: the run of the reference scenario's shape — attempt 1 writes the record, the last attempt publishes
 * the report, both with the records credential — shows the credential used twice with both uses listed, and the
 * records host's two allowed requests (and a denied one elsewhere) listed under their counts. The credential says
 * "Not checked" with what to do until a person presses Test revocation; then the answer and its time, not "—".
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "@playwright/test";
import type { EventInput } from "@/lib/contract/api";
import { recordsPolicy } from "../tests/support/policy-document";
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, newTaskId, seedIncidentTask, test } from "./fixtures";

let stub: http.Server;
let stubUrl: string;

test.beforeAll(async () => {
  // The credential owner's revocation endpoint: it says the credential is revoked.
  stub = http.createServer((_req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ revoked: true, revoked_at: "2026-01-02T03:04:05Z" }));
  });
  await new Promise<void>((resolve) => stub.listen(0, "127.0.0.1", resolve));
  stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  await new Promise<void>((resolve) => stub?.close(() => resolve()));
});

async function noSidewaysScroll(page: Page, width: number): Promise<void> {
  const sizes = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  expect(sizes.scrollWidth, `page scroll width at ${width} px`).toBeLessThanOrEqual(sizes.clientWidth);
}

for (const width of [1366, 420]) {
  test(`every count on Egress and vault is the rows it lists; a revocation check shows its answer (${width} px)`, async ({
    page,
    tenant,
    runtime,
  }) => {
    test.setTimeout(150_000);
    await page.setViewportSize({ width, height: 900 });
    const taskId = newTaskId("egress-counts");
    const incident = await seedIncidentTask(runtime, taskId);
    const sbx2 = incident.sandboxes[1];
    const at = (s: number) => new Date(Date.now() - 10_000 + s * 1000).toISOString();
    const ev = (n: number, plane: EventInput["plane"], type: string, attrs: Record<string, unknown>): EventInput => ({
      id: `${taskId}:more:${n}`,
      task_id: taskId,
      plane,
      type,
      occurred_at: at(n),
      environment_id: sbx2,
      attempt: 2,
      attrs,
    });
    // The last attempt publishes the report with the same credential (as the demo's publish_report does), and the
    // proxy refuses one request to a host the policy does not admit.
    await runtime.postEvents([
      ev(1, "vault", "credential.used", {
        credential_ref: "records-api",
        tool: "publish_report",
        host: "records.local",
        purpose: "records.publish",
      }),
      ev(2, "tools", "egress.allowed", {
        host: "records.local",
        method: "PUT",
        path: "/records/REPORT-1",
        tool: "publish_report",
        credential_ref: "records-api",
      }),
      ev(3, "tools", "egress.denied", { host: "paste.example.net", method: "POST", path: "/", tool: "publish_report" }),
    ]);

    await loginAs(page, tenant.users.owner.email, tenant.password);
    const doc = recordsPolicy((d) => {
      d.network.allowed_domains = ["records.local"];
      d.credentials[0]!.allowed_hosts = ["records.local"];
      d.credentials[0]!.revocation_url = `${stubUrl}/revocations`;
      d.tools = [];
    });
    const stored = await page.request.post("/api/v1/policies", { data: doc });
    expect(stored.status(), await stored.text()).toBe(201);
    const { version } = (await stored.json()) as { version: number };
    const activated = await page.request.post(`/api/v1/policies/${version}/activate`);
    expect(activated.status(), await activated.text()).toBe(200);

    await page.goto(`/tasks/${encodeURIComponent(taskId)}?tab=egress`);
    const credential = page.locator("[data-testid=credential-row][data-ref=records-api]");
    await expect(credential).toBeVisible({ timeout: 60_000 });

    // The count of uses is the uses listed: the PUT of update_record (attempt 1) and of publish_report (attempt 2).
    await expect(credential.getByTestId("credential-used")).toHaveAttribute("data-count", "2");
    await expect(credential.getByTestId("credential-used")).toContainText("2 times");
    const uses = credential.getByTestId("credential-use");
    await expect(uses).toHaveCount(2);
    await expect(uses.nth(0)).toContainText("publish_report");
    await expect(uses.nth(0)).toContainText("attempt 2");
    await expect(uses.nth(1)).toContainText("attempt 1");

    // Each host's counts are the requests listed under it.
    const records = page.locator("[data-testid=egress-host][data-host='records.local']");
    await expect(records.locator("td").nth(1)).toHaveText("2");
    await expect(records.locator("td").nth(2)).toHaveText("0");
    const lists = page.getByTestId("egress-requests");
    await expect(lists).toHaveCount(2);
    for (let i = 0; i < 2; i++) {
      await lists.nth(i).locator("summary").click();
    }
    const recordsList = page.getByTestId("egress-requests").filter({ hasText: "2 requests counted" });
    await expect(recordsList.getByTestId("egress-request")).toHaveCount(2);
    await expect(recordsList.getByTestId("egress-request").nth(0)).toContainText("PUT /records/REPORT-1");
    await expect(recordsList.getByTestId("egress-request").nth(0)).toContainText("tool publish_report");
    await expect(recordsList.getByTestId("egress-request").nth(1)).toContainText("attempt 1");
    const denied = page.getByTestId("egress-requests").filter({ hasText: "0 allowed, 1 denied" });
    await expect(denied.locator("[data-testid=egress-request][data-outcome=denied]")).toHaveCount(1);

    // Before any check: "Not checked" and what to do, never a bare dash.
    const check = credential.getByTestId("credential-last-check");
    await expect(check).toHaveAttribute("data-outcome", "not_checked");
    await expect(check).toContainText("Not checked: press Test revocation");
    await expect(credential.getByTestId("credential-revoked-event")).toContainText("reported no revocation");
    await expect(credential).not.toContainText("—");
    await noSidewaysScroll(page, width);
    await expectNoA11yViolations(page, { label: `egress tab before the check (${width} px)` });

    // After the check: the answer and its time.
    await credential.getByRole("button", { name: "Test revocation" }).click();
    await expect(credential.getByTestId("revocation-result")).toContainText("is revoked");
    await expect(check).toHaveAttribute("data-outcome", "revoked");
    await expect(check).toContainText(/Revocation checked \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC: revoked/);
    await expect(credential).not.toContainText("—");
    await noSidewaysScroll(page, width);
    await expectNoA11yViolations(page, { label: `egress tab after the check (${width} px)` });
  });
}
