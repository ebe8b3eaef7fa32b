/**
 * The worksheet a team brings to an adoption decision, in the browser (issue 24, decision 0046): publishing a map
 * whose summary says hold asks first in a modal dialog; the last editor cannot sign off, another reviewer does and
 * the page and both exports show it; per layer evidence items (a bad link refused with the server's message), an
 * assignee and comments; the eight-layer grid at 1366 and 420 px; the map printed as a clean PDF; renaming and
 * archiving (hidden from the list unless asked for); importing a map of a workflow that has one as its next version;
 * an edit typed just before a reload is saved, not lost. Each new control is checked with axe.
 */
import fs from "node:fs";
import path from "node:path";
import type { APIRequestContext, Page, TestInfo } from "@playwright/test";
import type { CustodyMapJson, MapView } from "@/lib/contract/maps";
import { MAP_LAYERS } from "@/lib/domain/maps/layers";
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, rid, test } from "./fixtures";

const ARTIFACTS = path.join(__dirname, "artifacts");

async function keepScreenshot(page: Page, testInfo: TestInfo, name: string, fullPage = true): Promise<void> {
  const file = testInfo.outputPath(name);
  await page.screenshot({ path: file, fullPage });
  await testInfo.attach(name, { path: file, contentType: "image/png" });
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  fs.copyFileSync(file, path.join(ARTIFACTS, name));
}

async function newMap(request: APIRequestContext, workflow: string, title = "Case files to reports") {
  const res = await request.post("/api/v1/maps", { data: { workflow, title } });
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()) as MapView;
}

/** Decides every layer: accept, except `held` (evidence requested) — the summary then says hold. */
async function decideAll(request: APIRequestContext, map: MapView, held: string | null = "tools"): Promise<void> {
  for (const row of map.layers) {
    const body =
      row.layer === held
        ? { decision: "request_evidence", decision_note: "Retention period — from the vendor", revision: row.revision }
        : {
            decision: "accept",
            custodians: [{ name: `${row.layer} team`, organization: "Acme" }],
            revision: row.revision,
          };
    const res = await request.patch(`/api/v1/maps/${map.id}/layers/${row.layer}`, { data: body });
    expect(res.status(), await res.text()).toBe(200);
  }
}

async function noSidewaysScroll(page: Page): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, "the page scrolls sideways").toBeLessThanOrEqual(0);
}

test("publishing on hold asks first; the last editor cannot sign off, another reviewer does", async ({
  page,
  tenant,
}, testInfo) => {
  test.setTimeout(300_000);
  await page.setViewportSize({ width: 1366, height: 900 });
  await loginAs(page, tenant.users.owner.email, tenant.password);
  const map = await newMap(page.request, `claims-${rid()}`);
  await decideAll(page.request, map);
  await page.goto(`/maps/${map.id}`);
  await expect(page.getByTestId("summary-headline")).toContainText("Hold");

  await page.getByRole("button", { name: "Publish v1" }).click();
  const dialog = page.getByTestId("publish-hold-dialog");
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText("although the summary says hold");
  await expectNoA11yViolations(page, { label: "publish on hold dialog" });
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole("button", { name: "Publish v1" })).toBeEnabled();

  await page.getByRole("button", { name: "Publish v1" }).click();
  await dialog.getByRole("button", { name: "Publish v1 on hold" }).click();
  await expect(page.getByRole("button", { name: "v1 published" })).toBeVisible();
  const signoff = page.getByTestId("signoff");
  await expect(signoff.getByTestId("signoff-state")).toHaveAttribute("data-state", "awaiting");
  await expect(signoff.getByTestId("signoff-self")).toContainText("You made the last change");
  await expect(signoff.getByRole("button", { name: /Sign off/ })).toHaveCount(0);

  await page.context().clearCookies();
  await loginAs(page, tenant.users.approver.email, tenant.password);
  await page.goto(`/maps/${map.id}`);
  await signoff.getByRole("button", { name: "Sign off v1" }).click();
  const confirm = page.getByTestId("signoff-dialog");
  await confirm.getByLabel("Note (optional)").fill("Held until the vendor answers on retention.");
  await expectNoA11yViolations(page, { label: "sign-off dialog" });
  await confirm.getByRole("button", { name: "Sign off v1" }).click();
  await expect(signoff.getByTestId("signoff-state")).toHaveAttribute("data-state", "signed");
  await expect(signoff).toContainText(`signed off by ${tenant.users.approver.email}`);
  await expect(signoff).toContainText("Held until the vendor answers on retention.");
  await page.reload();
  await expect(signoff.getByTestId("signoff-state")).toHaveAttribute("data-state", "signed");

  const json = (await (await page.request.get(`/api/v1/maps/${map.id}/export?format=json`)).json()) as CustodyMapJson;
  expect(json.signoff).toMatchObject({ version: 1, signed_off_by: tenant.users.approver.email });
  const md = await (await page.request.get(`/api/v1/maps/${map.id}/export?format=md`)).text();
  expect(md).toContain(`- Signed off: by ${tenant.users.approver.email} at `);
  await keepScreenshot(page, testInfo, "map-signed-off-1366.png");
});

test("per layer evidence items, assignee and comments; the grid at 1366 and 420 px; printed without controls", async ({
  page,
  tenant,
}, testInfo) => {
  test.setTimeout(300_000);
  await page.setViewportSize({ width: 1366, height: 900 });
  await loginAs(page, tenant.users.owner.email, tenant.password);
  const map = await newMap(page.request, `invoices-${rid()}`, "Invoices with a rather long title that has to wrap");
  await decideAll(page.request, map, "compute");
  await page.goto(`/maps/${map.id}`);

  const grid = page.getByTestId("layer-grid");
  await expect(grid.locator("tbody tr")).toHaveCount(MAP_LAYERS.length);
  await expect(grid.getByTestId("grid-compute").getByTestId("decision")).toHaveAttribute(
    "data-decision",
    "request_evidence",
  );
  await expect(grid.getByTestId("grid-tools")).toContainText("tools team (Acme)");

  const work = page.getByTestId("work-tools");
  await work.getByTestId("evidence-kind").selectOption("document");
  await work.getByTestId("evidence-ref").fill("javascript:alert(1)");
  await work.getByRole("button", { name: "Add evidence" }).click();
  await expect(work.getByTestId("field-error")).toContainText("http or https, not javascript");
  await expect(work.getByTestId("evidence-item")).toHaveCount(0);
  await work.getByTestId("evidence-ref").fill("https://wiki.example.com/runbooks/tools");
  await work.getByLabel("Note (optional)").fill("Tool owners' runbook");
  await work.getByRole("button", { name: "Add evidence" }).click();
  await expect(work.getByTestId("evidence-item")).toHaveCount(1);
  await work.getByTestId("evidence-kind").selectOption("task");
  await work.getByTestId("evidence-ref").fill("no-such-task");
  await work.getByRole("button", { name: "Add evidence" }).click();
  await expect(work.getByTestId("field-error")).toContainText("no task no-such-task in this workspace");

  await work.getByTestId("assignee").selectOption(tenant.users.responder.email);
  await work.getByLabel("Comment", { exact: true }).fill("The vendor answers on retention by Friday.");
  await work.getByRole("button", { name: "Add comment" }).click();
  await expect(work.getByTestId("comment")).toHaveCount(1);
  await expect(work.getByTestId("comment")).toContainText(tenant.users.owner.email);
  await page.reload();
  await expect(work.getByTestId("evidence-item")).toContainText("Tool owners' runbook");
  await expect(work.getByTestId("assignee")).toHaveValue(tenant.users.responder.email);
  await expect(work.getByTestId("comment")).toContainText("The vendor answers on retention by Friday.");
  await expectNoA11yViolations(page, { label: "map page with evidence, assignee and comments" });
  await keepScreenshot(page, testInfo, "map-page-1366.png");
  await grid.screenshot({ path: testInfo.outputPath("map-grid-1366.png") });
  fs.copyFileSync(testInfo.outputPath("map-grid-1366.png"), path.join(ARTIFACTS, "map-grid-1366.png"));

  await page.setViewportSize({ width: 420, height: 900 });
  await page.reload();
  await expect(grid).toBeVisible();
  await noSidewaysScroll(page);
  const box = await grid.boundingBox();
  expect(box!.x + box!.width).toBeLessThanOrEqual(420);
  await grid.screenshot({ path: testInfo.outputPath("map-grid-420.png") });
  fs.copyFileSync(testInfo.outputPath("map-grid-420.png"), path.join(ARTIFACTS, "map-grid-420.png"));
  await keepScreenshot(page, testInfo, "map-page-420.png");
  await page.getByTestId("layer-tools").scrollIntoViewIfNeeded();
  await keepScreenshot(page, testInfo, "map-layer-420.png", false);
  await expectNoA11yViolations(page, { label: "map page at 420 px" });

  // Printed: no navigation or controls; every layer in full, read-only.
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.emulateMedia({ media: "print" });
  await expect(page.getByRole("navigation", { name: "Main" })).toBeHidden();
  for (const name of ["Publish v1", "Archive", "Rename", "Print or PDF"])
    await expect(page.getByRole("button", { name })).toBeHidden();
  await expect(page.getByTestId("layer-tools").getByRole("textbox")).toHaveCount(0);
  await expect(page.getByTestId("layer-tools")).toContainText("Evidence to retain");
  await keepScreenshot(page, testInfo, "map-print.png");
  await keepScreenshot(page, testInfo, "map-print-top.png", false);
  await page.emulateMedia({ media: "screen" });
});

test("rename, archive and the list's filter; importing a map of a workflow that has one as its next version", async ({
  page,
  tenant,
}, testInfo) => {
  test.setTimeout(300_000);
  await page.setViewportSize({ width: 1366, height: 900 });
  await loginAs(page, tenant.users.owner.email, tenant.password);
  const workflow = `claims-${rid()}`;
  const map = await newMap(page.request, workflow, "Claims triage");
  const other = await newMap(page.request, `other-${rid()}`, "Another workflow's map");
  await page.goto(`/maps/${map.id}`);

  await page.getByRole("button", { name: "Rename" }).click();
  await page.getByLabel("Map title").fill("Claims triage, reviewed");
  await expectNoA11yViolations(page, { label: "renaming a map" });
  await page.getByRole("button", { name: "Save title" }).click();
  await expect(page.getByTestId("map-title")).toHaveText("Claims triage, reviewed");

  // An edit typed just before a reload is saved, and the browser is asked to warn.
  const tools = page.getByTestId("layer-tools");
  const evidence = tools.getByLabel("Evidence to retain");
  await evidence.click();
  await evidence.fill("Typed just before the reload");
  const dialog = page.waitForEvent("dialog");
  void page.reload({ timeout: 5_000 }).catch(() => undefined);
  const asked = await dialog;
  expect(asked.type()).toBe("beforeunload");
  await asked.dismiss();
  await expect(tools.getByTestId("save-state")).toHaveAttribute("data-state", "saved");
  await page.reload();
  await expect(page.getByTestId("layer-tools").getByLabel("Evidence to retain")).toHaveValue(
    "Typed just before the reload",
  );

  await page.getByRole("button", { name: "Archive" }).click();
  const archive = page.getByTestId("archive-dialog");
  await expect(archive).toBeVisible();
  await expectNoA11yViolations(page, { label: "archive dialog" });
  await archive.getByRole("button", { name: "Archive map" }).click();
  await expect(page.getByTestId("archived-badge")).toContainText(`archived by ${tenant.users.owner.email}`);

  await page.goto("/maps");
  await expect(page.getByTestId("map-link")).toHaveText(["Another workflow's map"]);
  await page.getByLabel("Archived maps").selectOption("include");
  await page.getByRole("button", { name: "Filter" }).click();
  await page.waitForURL(/archived=include/);
  await expect(page.getByTestId("map-link")).toHaveCount(2);
  await expect(page.getByTestId("map-archived")).toHaveCount(1);
  await expectNoA11yViolations(page, { label: "maps list with archived maps" });
  await keepScreenshot(page, testInfo, "maps-list-1366.png");

  // Import the map's JSON back: the list offers it as the next version of the (archived) map of that workflow.
  const doc = (await (await page.request.get(`/api/v1/maps/${map.id}/export?format=json`)).json()) as CustodyMapJson;
  doc.layers[3]!.custodians = [{ name: "Sandbox operations", organization: "Acme" }];
  const file = testInfo.outputPath("next-version.json");
  fs.writeFileSync(file, JSON.stringify(doc));
  await page.getByLabel("JSON file").setInputFiles(file);
  const offer = page.getByTestId("import-offer");
  await expect(offer).toContainText(`Workflow ${workflow} already has a map`);
  await expectNoA11yViolations(page, { label: "import offer" });
  await offer.getByRole("button", { name: /New version of “Claims triage, reviewed”/ }).click();
  await page.waitForURL(new RegExp(`/maps/${map.id}$`));
  await expect(page.getByTestId("layer-compute").getByLabel("Team or service 1")).toHaveValue("Sandbox operations");
  const maps = (await (await page.request.get(`/api/v1/maps?archived=include&workflow=${workflow}`)).json()) as {
    maps: unknown[];
  };
  expect(maps.maps).toHaveLength(1);
  expect(other.id).not.toBe(map.id);

  await page.setViewportSize({ width: 420, height: 900 });
  await page.goto("/maps?archived=include");
  await noSidewaysScroll(page);
  await keepScreenshot(page, testInfo, "maps-list-420.png");
});
