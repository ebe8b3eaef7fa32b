/**
 * Every page of the app, for the accessibility audit (e2e/a11y.spec.ts): where it is, who looks at it, and what to
 * do before checking it (wait for its data, open a dialog). Adding a page is one entry here; the audit then checks
 * it with `expectNoA11yViolations` (e2e/a11y.ts).
 */
import type { Page } from "@playwright/test";
import type { Role } from "@/db/schema/enums";
import { expect } from "./fixtures";

/** What the audit seeded for the pages to show: a task with an `unknown` write, events, artifacts, two checkpoints. */
export type A11yContext = {
  taskId: string;
  effect: string;
  eventId: string;
  mapId: string;
  exerciseId: string;
  invitationToken: string;
  /** A stale approval (approved under policy version 1, then the version changed) of the task. */
  approvalId: string;
};

/** One page (or one state of a page) to audit. */
export type A11yPage = {
  name: string;
  /** The path to open. */
  path: (c: A11yContext) => string;
  /** The role signed in, or null to look signed out. */
  as: Role | null;
  /** HTTP status the page answers (default 200). */
  status?: number;
  /** Waits until the page shows what is checked, or brings it into that state. */
  ready: (page: Page, c: A11yContext) => Promise<void>;
};

const task = (c: A11yContext, query = "") => `/tasks/${encodeURIComponent(c.taskId)}${query}`;
const visible = (testId: string) => async (page: Page) => {
  await expect(page.getByTestId(testId).first()).toBeVisible();
};
const heading = async (page: Page) => {
  await expect(page.getByRole("heading", { level: 1 }).first()).toBeVisible();
  await page.waitForLoadState("networkidle");
};

export const A11Y_PAGES: readonly A11yPage[] = [
  {
    name: "login",
    path: () => "/login",
    as: null,
    ready: async (p) => expect(p.getByRole("button", { name: "Sign in", exact: true })).toBeVisible(),
  },
  {
    name: "login, after the identity provider's answer failed its checks",
    path: () => "/login?error=OAuthCallback",
    as: null,
    ready: visible("provider-error"),
  },
  {
    name: "single sign-on refused",
    path: () => "/login/refused?reason=email_unverified",
    as: null,
    ready: visible("sign-in-refused"),
  },
  { name: "attention", path: () => "/", as: "responder", ready: visible("attention-item") },
  { name: "tasks list", path: () => "/tasks", as: "responder", ready: visible("task-row") },
  {
    name: "task, side effects tab",
    path: (c) => task(c, "?tab=side-effects"),
    as: "responder",
    ready: visible("side-effect-row"),
  },
  {
    name: "task, artifacts tab",
    path: (c) => task(c, "?tab=artifacts"),
    as: "responder",
    ready: visible("artifact-row"),
  },
  {
    name: "task, checkpoints tab",
    path: (c) => task(c, "?tab=checkpoints"),
    as: "responder",
    ready: visible("checkpoint-row"),
  },
  {
    name: "task, an event selected",
    path: (c) => task(c, `?event=${encodeURIComponent(c.eventId)}`),
    as: "responder",
    ready: visible("event-drawer"),
  },
  { name: "task, as a viewer", path: (c) => task(c), as: "viewer", ready: visible("side-effect-row") },
  {
    name: "task, reconcile dialog open",
    path: (c) => task(c),
    as: "responder",
    ready: async (p, c) => {
      await p.getByRole("button", { name: `Reconcile ${c.effect}`, exact: true }).click();
      const dialog = p.getByTestId("reconcile-dialog");
      await expect(dialog).toBeVisible();
      await dialog.getByRole("radio", { name: /It completed/ }).check();
      await dialog.getByLabel("External operation id").fill("op-a11y-1");
      await dialog.getByLabel("Evidence").fill("Seen in the records system.");
      // The submit button enabled, so that its colours are checked too.
      await expect(dialog.getByRole("button", { name: `Record ${c.effect} as completed` })).toBeEnabled();
    },
  },
  // One entry per Settings section page (/settings itself redirects to the first).
  ...(
    [
      ["members", "section#members"],
      ["api-keys", "section#api-keys"],
      ["approvals", "section#approvals"],
      ["lookups", "section#lookups"],
      ["notifications", "section#notifications"],
      ["export", "[data-testid=settings-nav]"],
    ] as const
  ).map(([section, selector]): A11yPage => ({
    name: `settings: ${section}`,
    path: () => `/settings/${section}`,
    as: "owner",
    ready: async (p) => expect(p.locator(selector)).toBeVisible(),
  })),
  {
    name: "audit",
    path: () => "/audit",
    as: "owner",
    ready: async (p) => expect(p.getByRole("heading", { level: 1 })).toBeVisible(),
  },
  {
    name: "task not found",
    path: () => "/tasks/no-such-task",
    as: "responder",
    status: 404,
    ready: async (p) => expect(p.getByRole("heading", { name: "Task not found" })).toBeVisible(),
  },
  { name: "custody maps", path: () => "/maps", as: "owner", ready: visible("map-row") },
  // The stale approval (tests/support/approvals.ts) activated stored version 2, so the list has two versions.
  { name: "policies", path: () => "/policies", as: "owner", ready: visible("policy-row") },
  { name: "task, egress tab", path: (c) => task(c, "?tab=egress"), as: "responder", ready: visible("egress-tab") },
  { name: "custody map worksheet", path: (c) => `/maps/${c.mapId}`, as: "owner", ready: heading },
  { name: "custody map worksheet, as a viewer", path: (c) => `/maps/${c.mapId}`, as: "viewer", ready: heading },
  { name: "new interruption exercise", path: (c) => `/maps/${c.mapId}/exercises/new`, as: "owner", ready: heading },
  {
    name: "interruption exercise",
    path: (c) => `/maps/${c.mapId}/exercises/${c.exerciseId}`,
    as: "owner",
    ready: heading,
  },
  { name: "account", path: () => "/account", as: "viewer", ready: visible("workspace-row") },
  {
    name: "invitation",
    path: (c) => `/invitations/${c.invitationToken}`,
    as: null,
    ready: visible("invitation-summary"),
  },
  { name: "approvals queue", path: () => "/approvals", as: "approver", ready: visible("approval-row") },
  {
    name: "approval, stale with the diff",
    path: (c) => `/approvals/${c.approvalId}`,
    as: "approver",
    ready: visible("stale-panel"),
  },
  {
    name: "approval, re-approve confirmation open",
    path: (c) => `/approvals/${c.approvalId}`,
    as: "approver",
    ready: async (p) => {
      await p.getByTestId("approve-button").click();
      await expect(p.getByTestId("confirm-dialog")).toBeVisible();
    },
  },
  {
    name: "approval, as a viewer",
    path: (c) => `/approvals/${c.approvalId}`,
    as: "viewer",
    ready: visible("cannot-decide"),
  },
  {
    name: "task, approvals tab",
    path: (c) => task(c, "?tab=approvals"),
    as: "responder",
    ready: visible("task-approval-row"),
  },
  {
    name: "page not found",
    path: () => "/no-such-page",
    as: "responder",
    status: 404,
    ready: async (p) => expect(p.locator("h1, h2").first()).toBeVisible(),
  },
];
