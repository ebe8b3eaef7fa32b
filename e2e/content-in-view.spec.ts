/**
 * The content being decided about (decision 0045), in the browser: uploaded artifacts shown safely on the task page
 * (a hostile Markdown file does not run or load anything), changed bytes as a visible stop, the approval page with the
 * payload and the artifact it publishes (and, when stale, the link to the policy diff), and the reconcile dialog with
 * the write's request payload. Each checked with axe, and looked at 1366 and 420 px wide: long JSON lines stay inside
 * their box.
 */
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import type { APIRequestContext, Page, TestInfo } from "@playwright/test";
import { queryRows } from "@/db";
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, makeEvent, makeRecord, newTaskId, test, type RuntimeApi } from "./fixtures";
import { payloadDigestOf, seedStaleApproval } from "../tests/support/approvals";

const sha = (b: string) => createHash("sha256").update(b).digest("hex");

const HOSTILE_MD = [
  "# Case report",
  "",
  "All **fine**.",
  "",
  "<script>window.__pwned = 'script'</script>",
  '<img src="x" onerror="window.__pwned = \'img\'">',
  '<iframe src="https://example.com"></iframe>',
  "",
  "[click me](javascript:window.__pwned='link')",
  "",
  "![tracker](https://tracker.example/pixel.png)",
  "",
].join("\n");
const LONG_JSON = JSON.stringify({ id: "rec-1", note: "n".repeat(600), nested: { list: [1, 2, 3] } });
const NOTES = `first line\n${"word ".repeat(200)}\n`;

async function upload(request: APIRequestContext, apiKey: string, taskId: string, body: string): Promise<void> {
  const res = await request.put(`/api/v1/tasks/${taskId}/artifacts/${sha(body)}/content`, {
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/octet-stream" },
    data: Buffer.from(body),
  });
  expect(res.status(), await res.text()).toBe(201);
}

async function seedArtifacts(runtime: RuntimeApi, request: APIRequestContext, apiKey: string, taskId: string) {
  const files = [
    { ref: "s3://out/report.md", body: HOSTILE_MD, media_type: "text/markdown" },
    { ref: "s3://out/record.json", body: LONG_JSON, media_type: "application/json" },
    { ref: "s3://out/notes.txt", body: NOTES, media_type: "text/plain" },
  ];
  await runtime.putRecord(
    makeRecord(taskId, {
      artifacts: files.map((f) => ({ ref: f.ref, sha256: sha(f.body), size: f.body.length, media_type: f.media_type })),
    }),
  );
  // The task exists now (its first checkpoint); a runtime uploads as soon as it does.
  for (const f of files) await upload(request, apiKey, taskId, f.body);
}

/** Screenshots at 1366 and 420 px, each with no horizontal page scroll. */
async function lookAt(page: Page, testInfo: TestInfo, name: string, before?: () => Promise<void>) {
  for (const width of [1366, 420]) {
    await page.setViewportSize({ width, height: 900 });
    if (before) await before();
    const file = testInfo.outputPath(`${name}-${width}px.png`);
    await page.screenshot({ path: file, fullPage: true });
    await testInfo.attach(`${name}-${width}px.png`, { path: file, contentType: "image/png" });
    const sizes = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
    }));
    expect(sizes.scrollWidth, `${name} at ${width} px scrolls sideways`).toBeLessThanOrEqual(sizes.clientWidth);
  }
  await page.setViewportSize({ width: 1366, height: 900 });
}

test("the task page shows uploaded Markdown, JSON and text safely, with downloads", async ({
  page,
  request,
  tenant,
  runtime,
}, testInfo) => {
  test.setTimeout(120_000);
  const taskId = newTaskId("content");
  await seedArtifacts(runtime, request, tenant.apiKey, taskId);
  const requests: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto(`/tasks/${taskId}?tab=artifacts`);
  const rows = page.getByTestId("artifact-row");
  await expect(rows).toHaveCount(3);

  const reportRow = rows.filter({ hasText: "report.md" });
  await reportRow.getByRole("button", { name: "View" }).click();
  const md = page.getByTestId("artifact-markdown");
  await expect(md.getByRole("heading", { name: "Case report" })).toBeVisible();
  await expect(md.locator("strong")).toHaveText("fine");
  // Raw HTML is dropped, never parsed: no script, image, iframe or handler; the javascript: link has no such href.
  await expect(md.locator("script, img, iframe, [onerror]")).toHaveCount(0);
  await expect(md.getByText("[image: tracker]")).toBeVisible();
  const href = await md.getByRole("link", { name: "click me" }).getAttribute("href");
  expect(href ?? "").not.toMatch(/^javascript:/i);
  await md
    .getByRole("link", { name: "click me" })
    .click({ modifiers: [] })
    .catch(() => {});
  expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
  expect(requests.filter((u) => u.includes("tracker.example") || u.includes("example.com/"))).toEqual([]);
  await page.goto(`/tasks/${taskId}?tab=artifacts`);

  const jsonRow = page.getByTestId("artifact-row").filter({ hasText: "record.json" });
  await jsonRow.getByRole("button", { name: "View" }).click();
  await expect(page.getByTestId("artifact-json")).toContainText('"id": "rec-1"');
  const download = page.getByTestId("artifact-download");
  await expect(download).toHaveText("Download record.json");
  const dl = await page.request.get((await download.getAttribute("href"))!);
  expect(dl.headers()["content-disposition"]).toMatch(/^attachment; filename="record\.json"/);
  expect(dl.headers()["x-content-type-options"]).toBe("nosniff");
  expect(await dl.text()).toBe(LONG_JSON);

  await expectNoA11yViolations(page, { label: "task page, artifact viewer (JSON)" });
  await lookAt(page, testInfo, "task-artifact-json");
  await page.getByTestId("artifact-row").filter({ hasText: "notes.txt" }).getByRole("button", { name: "View" }).click();
  await expect(page.getByTestId("artifact-text")).toContainText("first line");
  await page.getByTestId("artifact-row").filter({ hasText: "report.md" }).getByRole("button", { name: "View" }).click();
  await expectNoA11yViolations(page, { label: "task page, artifact viewer (Markdown)" });
  await lookAt(page, testInfo, "task-artifact-markdown");
  expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
});

test("bytes changed after the upload are a visible stop on the task page", async ({
  page,
  request,
  db,
  tenant,
  runtime,
}, testInfo) => {
  test.setTimeout(120_000);
  const taskId = newTaskId("content-stop");
  await seedArtifacts(runtime, request, tenant.apiKey, taskId);
  await queryRows(
    db.db,
    sql`update artifact_contents set bytes = ${Buffer.from("# forged")} where tenant_id = ${tenant.tenantId} and sha256 = ${sha(HOSTILE_MD)}`,
  );
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${taskId}`);
  const stop = page.getByTestId("artifact-stop");
  await expect(stop).toContainText("s3://out/report.md");
  await expect(stop).toContainText("do not match their sha256");
  await stop.getByRole("link", { name: "See the artifacts" }).click();
  await expect(page.getByTestId("artifact-row-mismatch")).toHaveText("✕ bytes changed");
  await expect(page.getByTestId("artifact-mismatch")).toBeVisible();
  await expect(page.getByText("# forged")).toHaveCount(0);
  await expectNoA11yViolations(page, { label: "task page with an artifact stop" });
  await lookAt(page, testInfo, "task-artifact-stop");
});

test("the approval page shows the payload and the artifact the write publishes", async ({
  page,
  request,
  tenant,
  runtime,
}, testInfo) => {
  test.setTimeout(120_000);
  const taskId = newTaskId("content-appr");
  await seedArtifacts(runtime, request, tenant.apiKey, taskId);
  const args = { report: "report.md", channel: `case-reports/${taskId}`, note: "x".repeat(400) };
  const asked = await request.post(`/api/v1/tasks/${taskId}/side-effects/publish_report/intent`, {
    headers: { authorization: `Bearer ${tenant.apiKey}` },
    data: {
      idempotency_key: `publish-${taskId}`,
      payload_digest: payloadDigestOf("publish_report", args),
      action: "reports.publish",
      tool: "publish_report",
      mutation: true,
      attempt: 1,
      requires_approval: true,
      payload: args,
    },
  });
  expect(asked.status(), await asked.text()).toBe(403);
  const approvalId = ((await asked.json()) as { error: { details: { approval_id: string } } }).error.details
    .approval_id;
  await loginAs(page, tenant.users.approver.email, tenant.password);
  await page.goto(`/approvals/${approvalId}`);
  await expect(page.getByTestId("approval-payload")).toContainText('"report": "report.md"');
  const published = page.getByTestId("approval-artifact");
  await expect(published).toContainText("s3://out/report.md");
  await expect(published.getByTestId("artifact-markdown").getByRole("heading", { name: "Case report" })).toBeVisible();
  await expect(published.locator("script, img, iframe")).toHaveCount(0);
  await expectNoA11yViolations(page, { label: "approval page with its artifact" });
  await lookAt(page, testInfo, "approval-artifact");
});

test("a stale approval links to the policy diff between the approved and the current version", async ({
  page,
  db,
  tenant,
  runtime,
}) => {
  const taskId = newTaskId("content-stale");
  await runtime.putRecord(makeRecord(taskId));
  const approvalId = await seedStaleApproval(db.db, tenant, taskId, process.env.E2E_SIGNING_KEY!);
  await loginAs(page, tenant.users.approver.email, tenant.password);
  await page.goto(`/approvals/${approvalId}`);
  const link = page.getByTestId("policy-diff-link");
  await expect(link).toHaveText("See what changed in the policy from v1 to v2");
  await link.click();
  await expect(page).toHaveURL(/\/policies\?v=2&compare=1/);
  await expect(page.getByRole("heading", { name: "Changes from v1 to v2" })).toBeVisible();
});

test("the reconcile dialog shows the request payload of the write", async ({
  page,
  tenant,
  runtime,
  request,
}, testInfo) => {
  test.setTimeout(120_000);
  const taskId = newTaskId("content-recon");
  const key = `idem:${taskId}:update_record:1`;
  await runtime.putRecord(
    makeRecord(taskId, {
      side_effects: { update_record: { idempotency_key: key, status: "not_started", tool: "update_record" } },
    }),
  );
  const payload = { record_id: `rec-${taskId}`, fields: { status: "reviewed", summary: "s".repeat(500) } };
  const go = await request.post(`/api/v1/tasks/${taskId}/side-effects/update_record/intent`, {
    headers: { authorization: `Bearer ${tenant.apiKey}` },
    data: {
      idempotency_key: key,
      payload_digest: payloadDigestOf("update_record", payload),
      action: "records.update",
      tool: "update_record",
      mutation: true,
      attempt: 1,
      payload,
    },
  });
  expect(go.status(), await go.text()).toBe(200);
  await runtime.postEvents([
    makeEvent(taskId, {
      type: "run.interrupted",
      occurred_at: new Date(Date.now() + 1000).toISOString(),
      attrs: { reason: "sandbox_lost" },
    }),
  ]);
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${taskId}`);
  await page.getByRole("button", { name: "Reconcile update_record", exact: true }).click();
  const dialog = page.getByTestId("reconcile-dialog");
  const shown = dialog.getByTestId("reconcile-payload");
  await expect(shown).toContainText(`"record_id": "rec-${taskId}"`);
  await expect(shown).toContainText("As its intent sent it");
  await expectNoA11yViolations(page, {
    label: "reconcile dialog with the payload",
    include: ["[data-testid=reconcile-dialog]"],
  });
  await lookAt(page, testInfo, "reconcile-payload");
});
