/**
 * Custody maps in the browser (docs/concepts.md#custody-maps): an owner starts a map, fills a row — the "shared"
 * custodian is refused with a message asking for both sides and the handoff — records an interruption exercise linked
 * to a task shaped like the demo's (unknown write, gate stop), and sees the covered layer turn verified with a link
 * back. A second writer's change shows as a conflict with both versions. A viewer reads the map but cannot edit it, in
 * the page and through the API. The "Test revocation" step links a revocation check of the task, shown with a link to
 * its event on the task's timeline.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Page, TestInfo } from "@playwright/test";
import type { MapView } from "@/lib/contract/maps";
import { createExercise } from "@/lib/domain/exercises/create";
import { createMap } from "@/lib/domain/maps/create";
import { expect, loginAs, makeEvent, makeRecord, newTaskId, seedIncidentTask, test } from "./fixtures";

const ARTIFACTS = path.join(__dirname, "artifacts");

async function keepScreenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const file = testInfo.outputPath(name);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: "image/png" });
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  fs.copyFileSync(file, path.join(ARTIFACTS, name));
}

test("an owner fills a row, records an exercise linked to the run and sees the layer turn verified", async ({
  page,
  tenant,
  runtime,
}, testInfo) => {
  test.setTimeout(120_000);
  const taskId = newTaskId("case-map");
  await seedIncidentTask(runtime, taskId);
  await loginAs(page, tenant.users.owner.email, tenant.password);

  await page.getByRole("link", { name: "Maps" }).click();
  await expect(page.getByTestId("maps-empty")).toContainText("No custody maps yet");
  await page.getByLabel("Workflow", { exact: true }).fill("document-processing");
  await page.getByLabel("Title", { exact: true }).fill("Case files to reports");
  await page.getByRole("button", { name: "Create map" }).click();
  await page.waitForURL(/\/maps\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("map-title")).toHaveText("Case files to reports");
  await expect(page.getByTestId("summary-headline")).toContainText("8 of 8 layers have no decision");

  const tools = page.getByTestId("layer-tools");
  await tools.getByRole("button", { name: "+ Add custodian" }).click();
  await tools.getByLabel("Team or service 1").fill("Shared");
  await tools.getByLabel("Organization 1").fill("Acme");
  const refused = tools.getByTestId("field-error").first();
  await expect(refused).toContainText('"Shared" is not a custodian');
  await expect(refused).toContainText("name both sides");
  await expect(refused).toContainText("handoff");
  await expect(tools.getByTestId("save-state")).toHaveAttribute("data-state", "invalid");
  await expect(tools.getByLabel("Team or service 1")).toHaveAttribute("aria-invalid", "true");

  await tools.getByLabel("Team or service 1").fill("Records API owners");
  await expect(tools.getByTestId("save-state")).toHaveAttribute("data-state", "saved");
  // Times are UTC everywhere, the save time included.
  await expect(tools.getByTestId("save-state")).toHaveText(/^✔Saved \d{2}:\d{2}:\d{2} UTC$/);
  await expect(tools.getByTestId("field-error")).toHaveCount(0);

  // A second organization needs the handoff.
  await tools.getByRole("button", { name: "+ Add custodian" }).click();
  await tools.getByLabel("Team or service 2").fill("Sandbox operations");
  await tools.getByLabel("Organization 2").fill("VendorCo");
  await expect(tools.getByTestId("field-error").first()).toContainText("different organizations (Acme, VendorCo)");
  await tools
    .getByLabel(/^Handoff/)
    .fill(
      "Acme's records team answers lookups by idempotency key; VendorCo's operators read the answer before any retry.",
    );
  await tools.getByRole("radio", { name: "Accept" }).check();
  await expect(tools.getByTestId("save-state")).toHaveAttribute("data-state", "saved");
  await expect(page.getByTestId("map-save-state")).toHaveText(/All changes saved/);
  await expect(page.getByTestId("summary-accepted")).toHaveText("1");

  // Saved for real: a reload shows it.
  const mapUrl = page.url();
  await page.reload();
  await expect(page.getByTestId("layer-tools").getByLabel("Team or service 1")).toHaveValue("Records API owners");
  await expect(page.getByTestId("layer-tools").getByTestId("verification")).toHaveAttribute(
    "data-verification",
    "unknown",
  );

  // The exercise.
  await page.getByRole("link", { name: "New exercise" }).click();
  await page.getByRole("radio", { name: /after_external_write/ }).check();
  for (const label of ["Session state", "Compaction", "Compute", "Credentials", "Artifacts", "Export"]) {
    await page.getByRole("checkbox", { name: new RegExp(`^${label}`) }).uncheck();
  }
  await page.getByRole("button", { name: "Start the exercise" }).click();
  await page.waitForURL(/\/exercises\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("exercise-point")).toHaveText("after_external_write");
  await expect(page.getByTestId("run-command")).toContainText("DEMO_INTERRUPT_AT=after_external_write");
  await expect(page.getByTestId("run-command")).toContainText("npm run demo");

  const interrupt = page.getByTestId("step-interrupt");
  await interrupt.getByLabel("Find a task of this workspace").fill(taskId);
  await interrupt.getByRole("button", { name: new RegExp(taskId) }).click();
  await expect(interrupt.getByTestId("linked-task")).toHaveText(taskId);
  // What the product knows about the task comes in as suggested evidence.
  const facts = page.getByTestId("linked-task-facts");
  await expect(facts).toContainText("? unknown: update_record");
  await expect(facts.getByTestId("gate-verdict")).toHaveAttribute("data-verdict", "stop");
  const resume = page.getByTestId("step-resume_and_reconcile");
  await expect(resume.getByTestId("suggestions")).toContainText("resume gate says stop (side_effect_unknown)");
  await resume.getByTestId("suggestions").getByRole("button", { name: "Use" }).first().click();
  await expect(resume.getByLabel("Note")).toHaveValue(/resume gate says stop/);

  for (const step of [
    "define_expected_result",
    "establish_checkpoint",
    "interrupt",
    "resume_and_reconcile",
    "retrieve_and_export",
  ]) {
    await page.getByTestId(`step-${step}`).getByLabel("Status").selectOption("passed");
  }
  await page.getByTestId("step-test_revocation").getByLabel("Status").selectOption("blocked");
  await page.getByRole("radio", { name: /Visible stop/ }).check();
  await page
    .getByLabel("Finding")
    .fill("The gate stopped the resume until the unknown write was reconciled; nothing was written twice.");
  await expect(page.getByTestId("exercise-save-state")).toHaveAttribute("data-state", "saved");
  await page.getByRole("button", { name: "Complete the exercise" }).click();
  const completed = page.getByTestId("completed");
  await expect(completed).toContainText("Exercise completed");
  await expect(completed.getByTestId("verification").first()).toHaveAttribute("data-verification", "verified");
  await keepScreenshot(page, testInfo, "maps-exercise-completed.png");

  await completed.getByRole("link", { name: "Back to the map" }).click();
  await page.waitForURL(mapUrl);
  const toolsAfter = page.getByTestId("layer-tools");
  await expect(toolsAfter.getByTestId("verification")).toHaveAttribute("data-verification", "verified");
  await expect(toolsAfter.getByTestId("evidence-link")).toHaveText("Open the exercise");
  await expect(page.getByTestId("layer-recovery").getByTestId("verification")).toHaveAttribute(
    "data-verification",
    "verified",
  );
  await expect(page.getByTestId("layer-compute").getByTestId("verification")).toHaveAttribute(
    "data-verification",
    "unknown",
  );
  await expect(page.getByTestId("exercises").getByTestId("outcome")).toHaveAttribute("data-outcome", "visible_stop");
  await keepScreenshot(page, testInfo, "maps-worksheet.png");
});

test("a change saved by someone else meanwhile shows as a conflict with both versions", async ({
  page,
  tenant,
  db,
}) => {
  const map: MapView = await createMap(
    { db: db.db, actor: { kind: "system", tenantId: tenant.tenantId, label: "e2e" } },
    { body: { workflow: "invoices", title: "Invoice intake" } },
  );
  await loginAs(page, tenant.users.owner.email, tenant.password);
  await page.goto(`/maps/${map.id}`);
  const row = page.getByTestId("layer-export");
  await expect(row).toHaveAttribute("data-revision", "1");

  // Another owner saves the row first (through the API, on the same revision the page holds).
  const other = await page.request.patch(`/api/v1/maps/${map.id}/layers/export`, {
    data: { evidence: "Their inventory of the export", revision: 1 },
  });
  expect(other.status(), await other.text()).toBe(200);

  await row.getByLabel("Evidence to retain").fill("My inventory of the export");
  const conflict = row.getByTestId("conflict");
  await expect(conflict).toContainText("saved this row");
  await expect(conflict.getByTestId("conflict-theirs")).toHaveText("Their inventory of the export");
  await expect(conflict.getByTestId("conflict-yours")).toHaveText("My inventory of the export");
  await expect(row.getByTestId("save-state")).toHaveAttribute("data-state", "conflict");

  await conflict.getByRole("button", { name: "Save mine over theirs" }).click();
  await expect(row.getByTestId("save-state")).toHaveAttribute("data-state", "saved");
  await expect(row).toHaveAttribute("data-revision", "3");
  const stored = await (await page.request.get(`/api/v1/maps/${map.id}`)).json();
  expect(stored.layers.find((l: { layer: string }) => l.layer === "export").evidence).toBe(
    "My inventory of the export",
  );
});

test("a viewer reads the map but cannot edit it, in the page or through the API", async ({ page, tenant, db }) => {
  const map: MapView = await createMap(
    { db: db.db, actor: { kind: "system", tenantId: tenant.tenantId, label: "e2e" } },
    { body: { workflow: "document-processing", title: "Read only" } },
  );
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.getByRole("link", { name: "Maps" }).click();
  await expect(page.getByRole("button", { name: "Create map" })).toHaveCount(0);
  await page.getByTestId("map-link").filter({ hasText: "Read only" }).click();
  await expect(page.getByTestId("read-only-note")).toContainText("Your role (viewer) can read this map");
  const worksheet = page.getByTestId("worksheet");
  await expect(worksheet.getByTestId("layer-tools")).toContainText("Acceptance question");
  await expect(worksheet.getByRole("textbox")).toHaveCount(0);
  await expect(worksheet.getByRole("combobox")).toHaveCount(0);
  await expect(worksheet.getByRole("radio")).toHaveCount(0);
  await expect(page.getByRole("button", { name: /Publish/ })).toHaveCount(0);
  await expect(page.getByRole("link", { name: "New exercise" })).toHaveCount(0);
  await expect(page.getByRole("link", { name: "Export JSON" })).toBeVisible();

  const patch = await page.request.patch(`/api/v1/maps/${map.id}/layers/tools`, {
    data: { evidence: "viewer was here", revision: 1 },
  });
  expect(patch.status()).toBe(403);
  expect((await patch.json()).error.message).toMatch(/only roles owner, admin can/);
  expect((await page.request.post(`/api/v1/maps/${map.id}/publish`, { data: {} })).status()).toBe(403);
  expect(
    (
      await page.request.post(`/api/v1/maps/${map.id}/exercises`, { data: { interruption_point: "after_intent" } })
    ).status(),
  ).toBe(403);
  const stored = await (await page.request.get(`/api/v1/maps/${map.id}`)).json();
  expect(stored.layers.find((l: { layer: string }) => l.layer === "tools")).toMatchObject({ revision: 1 });

  await page.goto(`/maps/${map.id}/exercises/new`);
  await expect(page.getByTestId("read-only-note")).toContainText("owners and admins record them");
  await expect(page.getByRole("button", { name: "Start the exercise" })).toHaveCount(0);
});

for (const width of [420, 800]) {
  test(`the worksheet and an exercise at ${width} px do not scroll sideways`, async ({
    page,
    tenant,
    db,
  }, testInfo) => {
    const actor = { kind: "system" as const, tenantId: tenant.tenantId, label: "e2e" };
    const map: MapView = await createMap(
      { db: db.db, actor },
      { body: { workflow: "document-processing", title: "Narrow window" } },
    );
    const ex = await createExercise(
      { db: db.db, actor },
      { mapId: map.id, body: { interruption_point: "after_receipt" } },
    );
    await page.setViewportSize({ width, height: 900 });
    await loginAs(page, tenant.users.owner.email, tenant.password);
    for (const url of ["/maps", `/maps/${map.id}`, `/maps/${map.id}/exercises/${ex.id}`]) {
      await page.goto(url);
      await expect(page.locator("main h1")).toBeVisible();
      const { scrollWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth }));
      if (scrollWidth > width) await keepScreenshot(page, testInfo, `maps-${width}px-overflow.png`);
      expect(scrollWidth, `${url} at ${width} px`).toBeLessThanOrEqual(width);
    }
  });
}

test("an owner exports a map as JSON and imports it back; a bad file is refused naming the field", async ({
  page,
  tenant,
  db,
}, testInfo) => {
  const actor = { kind: "system" as const, tenantId: tenant.tenantId, label: "e2e" };
  const map: MapView = await createMap({ db: db.db, actor }, { body: { workflow: "claims", title: "Claims triage" } });
  await loginAs(page, tenant.users.owner.email, tenant.password);
  await page.goto(`/maps/${map.id}`);
  const md = page.waitForEvent("download");
  await page.getByRole("link", { name: "Export Markdown" }).click();
  const mdFile = await (await md).path();
  expect(fs.readFileSync(mdFile, "utf8")).toMatch(/^# Claims triage\n/);
  const json = page.waitForEvent("download");
  await page.getByRole("link", { name: "Export JSON" }).click();
  const download = await json;
  expect(download.suggestedFilename()).toBe("custody-map-claims-v1.json");
  const doc = JSON.parse(fs.readFileSync(await download.path(), "utf8")) as {
    layers: Array<{ custodians: unknown[] }>;
  };

  await page.getByRole("link", { name: "Custody maps" }).click();
  const bad = testInfo.outputPath("bad-map.json");
  doc.layers[3]!.custodians = [{ name: "everyone", organization: "Acme" }];
  fs.writeFileSync(bad, JSON.stringify(doc));
  await page.getByLabel("JSON file").setInputFiles(bad);
  // The workflow has a map already: the list offers the next version of it; this test imports a separate copy.
  await page.getByTestId("import-offer").getByRole("button", { name: "Import as a separate map" }).click();
  await expect(page.getByTestId("import-error")).toContainText("layers.3.custodians.0.name");
  await expect(page.getByTestId("import-error")).toContainText("name both sides");

  doc.layers[3]!.custodians = [{ name: "Sandbox operations", organization: "Acme" }];
  const good = testInfo.outputPath("good-map.json");
  fs.writeFileSync(good, JSON.stringify(doc));
  await page.getByLabel("JSON file").setInputFiles(good);
  await page.getByTestId("import-offer").getByRole("button", { name: "Import as a separate map" }).click();
  await page.waitForURL((url) => /\/maps\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(map.id));
  await expect(page.getByTestId("map-title")).toHaveText("Claims triage");
  await expect(page.getByTestId("layer-compute").getByLabel("Team or service 1")).toHaveValue("Sandbox operations");
});

test("the Test revocation step links the task's revocation check, which opens on the task's timeline", async ({
  page,
  tenant,
  runtime,
  db,
}) => {
  // The tool owner's revocation endpoint, a local stub: the credential is revoked.
  const stub = http.createServer((_req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ revoked: true, revoked_at: "2026-01-02T03:04:05Z" }));
  });
  await new Promise<void>((r) => stub.listen(0, "127.0.0.1", () => r()));
  try {
    const taskId = newTaskId("case-revoke");
    await runtime.putRecord(makeRecord(taskId));
    await runtime.postEvents([
      makeEvent(taskId, {
        plane: "vault",
        type: "credential.issued",
        attrs: { credential_ref: "records-api", credential_id: "cred-1" },
      }),
    ]);
    await loginAs(page, tenant.users.owner.email, tenant.password);
    const policy = await page.request.post("/api/v1/policies", {
      data: {
        network: { access: "restricted", allowed_domains: ["records.example.com"] },
        credentials: [
          {
            name: "records-api",
            type: "environment_variable",
            allowed_hosts: ["records.example.com"],
            revocation_url: `http://127.0.0.1:${(stub.address() as AddressInfo).port}/revocations`,
          },
        ],
        tools: [],
      },
    });
    expect(policy.status(), await policy.text()).toBeLessThan(300);
    const version = ((await policy.json()) as { version: number }).version;
    expect((await page.request.post(`/api/v1/policies/${version}/activate`)).status()).toBe(200);
    const checked = await page.request.post(`/api/v1/tasks/${taskId}/credentials/records-api/revocation-check`);
    expect(checked.status(), await checked.text()).toBe(200);

    const actor = { kind: "system" as const, tenantId: tenant.tenantId, label: "e2e" };
    const map: MapView = await createMap(
      { db: db.db, actor },
      { body: { workflow: "document-processing", title: "Revocation drill" } },
    );
    const ex = await createExercise(
      { db: db.db, actor },
      {
        mapId: map.id,
        body: {
          interruption_point: "after_intent",
          layers: ["credentials"],
        },
      },
    );
    await page.goto(`/maps/${map.id}/exercises/${ex.id}`);
    const step = page.getByTestId("step-test_revocation");
    await step.getByLabel("Find a task of this workspace").fill(taskId);
    await step.getByRole("button", { name: new RegExp(taskId) }).click();
    await expect(step.getByTestId("suggestions")).toContainText(
      "revocation check of records-api: revoked since 2026-01-02T03:04:05Z",
    );
    await step.getByRole("button", { name: /^Link this check as evidence/ }).click();
    await expect(step.getByRole("button", { name: /^Link this check as evidence/ })).toHaveText("Linked");
    await expect(step.getByTestId("step-event-link")).toContainText("revocation check of records-api: revoked");
    await expect(page.getByTestId("exercise-save-state")).toHaveAttribute("data-state", "saved");

    // Saved for real; the link opens the check's event on the task's timeline.
    await page.reload();
    const link = page.getByTestId("step-test_revocation").getByTestId("step-event-link");
    await expect(link).toContainText("revoked since 2026-01-02T03:04:05Z");
    await link.click();
    await page.waitForURL(/\/tasks\/[^?]+\?event=custody/);
    await expect(page.getByTestId("event-drawer")).toContainText("credential.revocation_checked");
  } finally {
    stub.close();
  }
});
