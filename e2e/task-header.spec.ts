/**
 * The task page's header is on the page once, from the first HTML on: only the gate's verdict streams in (a Suspense
 * boundary of its own, with a placeholder of the same height). A streamed boundary's content is inserted into the DOM
 * as a hidden copy beside its placeholder until React swaps it in; when the whole header streamed, the page held two
 * task ids (and two headers for screen readers and automation) for up to ~300 ms.
 *
 * The gate is held back so that its verdict streams after the first HTML, deterministically: of what the task page
 * reads, only the gate's statement reads `policy_versions`, and this test holds that table locked until the page's
 * first HTML is shown (the task view, the timeline and the layout do not wait for it).
 */
import { sql } from "drizzle-orm";
import { expect, loginAs, newTaskId, seedIncidentTask, test } from "./fixtures";

declare global {
  interface Window {
    /** The most `data-testid=task-id` elements the document held at once, after any DOM change (hidden ones too). */
    __mostTaskIds?: number;
    /** A streamed copy of the header's verdict badge was seen in the DOM, hidden, before React swapped it in. */
    __sawHiddenVerdict?: boolean;
  }
}

test("one task header from the first HTML on, while the gate's verdict streams in; it does not move", async ({
  page,
  db,
  tenant,
  runtime,
}) => {
  const incident = await seedIncidentTask(runtime, newTaskId("header"));
  await loginAs(page, tenant.users.responder.email, tenant.password);
  // Counted on every DOM change, before React's inline scripts swap a streamed boundary in.
  await page.addInitScript(() => {
    window.__mostTaskIds = 0;
    new MutationObserver(() => {
      window.__mostTaskIds = Math.max(
        window.__mostTaskIds ?? 0,
        document.querySelectorAll('[data-testid="task-id"]').length,
      );
      window.__sawHiddenVerdict ||= document.querySelector('[hidden] [data-testid="gate-verdict"]') !== null;
    }).observe(document, { childList: true, subtree: true });
  });

  const header = page.locator("header").filter({ has: page.getByTestId("task-id") });
  let before: { header: { height: number } | null; id: { x: number; y: number } | null };
  await db.db.transaction(async (tx) => {
    await tx.execute(sql`lock table policy_versions in access exclusive mode`);
    await page.goto(`/tasks/${incident.taskId}`, { waitUntil: "commit" });
    // The first HTML: the header, with the verdict's placeholder while the gate waits for the lock.
    await expect(page.getByTestId("task-id")).toHaveText(incident.taskId);
    await expect(header.getByTestId("gate-verdict-pending")).toBeVisible();
    expect(await page.getByTestId("task-id").count()).toBe(1);
    await page.evaluate(() => document.fonts.ready.then(() => undefined));
    before = { header: await header.boundingBox(), id: await page.getByTestId("task-id").boundingBox() };
  });

  // The gate answers (stop: the write is unknown) and its verdict streams into the header.
  await expect(header.getByTestId("gate-verdict")).toHaveAttribute("data-verdict", "stop");
  await expect(header.getByTestId("gate-verdict-pending")).toHaveCount(0);
  expect(await page.getByTestId("task-id").count()).toBe(1);
  // The verdict did stream after the first HTML (its hidden copy was seen, as a streamed header's would have been)...
  expect(await page.evaluate(() => window.__sawHiddenVerdict), "the verdict streamed in after the first HTML").toBe(
    true,
  );
  // ...and no copy of the header ever sat beside it.
  expect(
    await page.evaluate(() => window.__mostTaskIds),
    "task-id elements in the document at once, hidden ones included",
  ).toBe(1);
  // The placeholder had the verdict's height: the header keeps its size and the task id its place.
  expect((await header.boundingBox())?.height).toBe(before!.header?.height);
  expect(await page.getByTestId("task-id").boundingBox()).toEqual(before!.id);
});
