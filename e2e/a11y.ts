/**
 * Accessibility checks for the end-to-end suite: `expectNoA11yViolations(page)` runs axe-core (through
 * `@axe-core/playwright`) on the page as it is now, for WCAG 2 A and AA (tags `wcag2a`, `wcag2aa`), and fails with
 * one readable line per violation and element. axe does not measure the contrast of SVG text (the timeline's lane
 * names and counts, bar labels, axis ticks), so the same call also checks each visible SVG `<text>` against the
 * fill of the shape behind it ({@link svgTextContrastProblems}); and text axe measured below AA but left "to review"
 * (a one-digit count is "too short to tell if it is text") counts as a violation ({@link measuredContrastShortfalls}). Any spec may call it after bringing a page into the state to check
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
export function describeViolations(violations: AxeResults["violations"]): string[] {
  return violations.flatMap((v) =>
    v.nodes.map(
      (n) =>
        `${v.id} (${v.impact ?? "?"}): ${v.help} — ${n.target.join(" ")} — ${(n.failureSummary ?? "").replace(/\s+/g, " ")}`,
    ),
  );
}

type AxeResults = Awaited<ReturnType<AxeBuilder["analyze"]>>;

/**
 * Elements axe left for review under `color-contrast` although it measured their contrast, and found it below what
 * AA asks (e.g. a count "5" of 4.3:1: axe cannot tell whether one character is text, but here it is).
 */
export function measuredContrastShortfalls(incomplete: AxeResults["incomplete"]): string[] {
  return incomplete
    .filter((v) => v.id === "color-contrast")
    .flatMap((v) =>
      v.nodes.flatMap((n) =>
        [...n.any, ...n.all, ...n.none].flatMap((check) => {
          const data = (check.data ?? {}) as {
            contrastRatio?: number;
            expectedContrastRatio?: string;
            fgColor?: string;
            bgColor?: string;
          };
          const expected = parseFloat(data.expectedContrastRatio ?? "");
          if (!(typeof data.contrastRatio === "number" && data.contrastRatio > 0 && data.contrastRatio < expected))
            return [];
          return [
            `color-contrast (measured): ${data.contrastRatio}:1, needs ${expected}:1 (${data.fgColor} on ${data.bgColor}) — ${n.target.join(" ")}`,
          ];
        }),
      ),
    );
}

/** WCAG 2 AA contrast for text under 18.66 px bold / 24 px (all the SVG text here is smaller). */
export const MIN_TEXT_CONTRAST = 4.5;

/**
 * Visible SVG `<text>` elements whose fill has less than {@link MIN_TEXT_CONTRAST} contrast with what is behind
 * them: the solid fill of the nearest `rect` (a sibling of the text or of one of its ancestors, drawn before it)
 * whose box holds the text, or of a `path` drawn just before the text whose fill holds the middle of each of its
 * characters, else the first opaque background colour of the SVG's HTML ancestors. Colours are
 * resolved by the browser (any CSS colour space) through a canvas. One line per element.
 */
export async function svgTextContrastProblems(page: Page, min = MIN_TEXT_CONTRAST): Promise<string[]> {
  return page.evaluate((minRatio) => {
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 1;
    const ctx = canvas.getContext("2d", { willReadFrequently: true })!;
    const rgba = (css: string): [number, number, number, number] | null => {
      if (!css || css === "none" || css.startsWith("url(")) return null;
      ctx.clearRect(0, 0, 1, 1);
      ctx.fillStyle = "#000";
      ctx.fillStyle = css;
      ctx.fillRect(0, 0, 1, 1);
      const [r, g, b, a] = ctx.getImageData(0, 0, 1, 1).data;
      return [r!, g!, b!, a! / 255];
    };
    const lum = ([r, g, b]: number[]) =>
      [r!, g!, b!]
        .map((c) => c / 255)
        .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
        .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i]!, 0);
    const ratio = (a: number[], b: number[]) => {
      const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
      return (hi! + 0.05) / (lo! + 0.05);
    };
    const contains = (outer: DOMRect, inner: DOMRect) =>
      inner.left >= outer.left - 0.5 &&
      inner.right <= outer.right + 0.5 &&
      inner.top >= outer.top - 0.5 &&
      inner.bottom <= outer.bottom + 0.5;
    const pageBackground = (el: Element): number[] => {
      for (let n: Element | null = el; n; n = n.parentElement) {
        const c = rgba(getComputedStyle(n).backgroundColor);
        if (c && c[3] >= 0.99) return c;
      }
      return [255, 255, 255, 1];
    };
    // A path drawn just before a text (the timeline's bins: one path of pills, one text of their counts) is behind it
    // when the middle of every character lies inside the path's fill.
    const underEveryChar = (path: SVGPathElement, text: SVGTextElement): boolean => {
      const n = text.getNumberOfChars();
      if (n === 0) return false;
      for (let i = 0; i < n; i += 1) {
        const r = text.getExtentOfChar(i);
        if (!path.isPointInFill(new DOMPoint(r.x + r.width / 2, r.y + r.height / 2))) return false;
      }
      return true;
    };
    const behind = (text: SVGTextElement): number[] => {
      const box = text.getBoundingClientRect();
      for (
        let node: Element = text;
        node.parentElement && node.tagName.toLowerCase() !== "html";
        node = node.parentElement
      ) {
        for (let sib = node.previousElementSibling; sib; sib = sib.previousElementSibling) {
          const tag = sib.tagName.toLowerCase();
          if (tag !== "rect" && !(tag === "path" && node === text && sib.parentElement === text.parentElement))
            continue;
          const fill = rgba(getComputedStyle(sib).fill);
          const opacity = Number(getComputedStyle(sib).opacity);
          if (!fill || fill[3] < 0.99 || opacity < 0.99) continue;
          if (tag === "rect" ? contains(sib.getBoundingClientRect(), box) : underEveryChar(sib as SVGPathElement, text))
            return fill;
        }
        if (node.tagName.toLowerCase() === "svg" && !(node.parentElement instanceof SVGElement)) break;
      }
      return pageBackground(text.ownerSVGElement ?? text);
    };
    const problems: string[] = [];
    for (const text of document.querySelectorAll<SVGTextElement>("svg text")) {
      const box = text.getBoundingClientRect();
      if (box.width === 0 || box.height === 0 || !(text.textContent ?? "").trim()) continue;
      let dimmed = false;
      for (let n: Element | null = text; n; n = n.parentElement)
        if (Number(getComputedStyle(n).opacity) < 0.99) dimmed = true;
      if (dimmed) continue; // dimmed on purpose (filtered out); not text meant to be read
      const fill = rgba(getComputedStyle(text).fill);
      if (!fill || fill[3] < 0.99) continue;
      const r = ratio(fill, behind(text));
      if (r < minRatio)
        problems.push(
          `svg text contrast ${r.toFixed(2)}:1 (needs ${minRatio}:1): "${text.textContent?.trim().slice(0, 40)}"`,
        );
    }
    return problems;
  }, min);
}

/**
 * Runs axe on `page` (WCAG 2 A and AA), and the SVG text contrast check, and expects no violation.
 * @throws the assertion error listing every violation.
 */
export async function expectNoA11yViolations(page: Page, opts: A11yOptions = {}): Promise<void> {
  let builder = new AxeBuilder({ page }).withTags([...A11Y_TAGS]);
  for (const selector of opts.include ?? []) builder = builder.include(selector);
  for (const selector of opts.exclude ?? []) builder = builder.exclude(selector);
  const results = await builder.analyze();
  const label = opts.label ?? new URL(page.url()).pathname;
  const check = opts.soft ? expect.soft : expect;
  check(
    [...describeViolations(results.violations), ...measuredContrastShortfalls(results.incomplete)],
    `axe (WCAG 2 A/AA) on ${label}`,
  ).toEqual([]);
  check(await svgTextContrastProblems(page), `SVG text contrast on ${label}`).toEqual([]);
}
