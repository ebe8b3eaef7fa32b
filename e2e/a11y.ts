/**
 * Accessibility checks for the end-to-end suite: `expectNoA11yViolations(page)` runs axe-core (through
 * `@axe-core/playwright`) on the page as it is now, for WCAG 2 A and AA (tags `wcag2a`, `wcag2aa`), and fails with
 * one readable line per violation and element. Any spec may call it after bringing a page into the state to check
 * (a dialog open, a tab selected); e2e/a11y-pages.ts lists the app's pages for e2e/a11y.spec.ts.
 */
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { expect } from "./fixtures";

/** The axe rule tags checked: WCAG 2.0 level A and AA. */
export const A11Y_TAGS = ["wcag2a", "wcag2aa"] as const;

/** Options of {@link expectNoA11yViolations}. */
export type A11yOptions = {
  /** What is checked, for the failure message (default: the page's path). */
  label?: string;
  /** CSS selectors to check only (default: the whole document). */
  include?: string[];
  /** CSS selectors to leave out (use sparingly, with a reason next to the call). */
  exclude?: string[];
  /** Record a failure and go on (`expect.soft`), so that one test can audit several pages. */
  soft?: boolean;
};

/** One line per violation and element: rule id, impact, what it asks, where, and axe's summary of the failure. */
export function describeViolations(
  violations: Awaited<ReturnType<AxeBuilder["analyze"]>>["violations"],
): string[] {
  return violations.flatMap((v) =>
    v.nodes.map((n) => `${v.id} (${v.impact ?? "?"}): ${v.help} — ${n.target.join(" ")} — ${(n.failureSummary ?? "").replace(/\s+/g, " ")}`),
  );
}

/**
 * Runs axe on `page` (WCAG 2 A and AA) and expects no violation.
 * @throws the assertion error listing every violation.
 */
export async function expectNoA11yViolations(page: Page, opts: A11yOptions = {}): Promise<void> {
  let builder = new AxeBuilder({ page }).withTags([...A11Y_TAGS]);
  for (const selector of opts.include ?? []) builder = builder.include(selector);
  for (const selector of opts.exclude ?? []) builder = builder.exclude(selector);
  const results = await builder.analyze();
  const label = opts.label ?? new URL(page.url()).pathname;
  (opts.soft ? expect.soft : expect)(describeViolations(results.violations), `axe (WCAG 2 A/AA) on ${label}`).toEqual([]);
}
