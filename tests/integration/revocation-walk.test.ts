/**
 * Revocation is immediate on every protected route (docs/concepts.md#runtime-api-keys,
 * #tenants-people-and-roles; both show in the audit log), over HTTP against the built server:
 * - an owner removes an admin from the workspace (`DELETE /api/v1/settings/members/{id}`) and revokes a runtime key
 *   (`POST /api/v1/settings/api-keys/{id}/revoke`); on the very next request, every route of the API registry
 *   (tests/support/api-routes.ts) answers the admin's session cookie and the key 401 `unauthorized`, exactly as it
 *   answers no credentials at all, and every dashboard page (every `page.tsx` under app/(dashboard)) sends them to
 *   /login, as it does a signed-out visitor (decision 0007: the session row and the membership are read on every
 *   request, in one place — lib/domain/tenancy/sessions.ts actorForSession);
 * - a session row that outlived the removal (a sign-in racing it) is refused all the same, because the membership
 *   itself is checked, not only the row;
 * - both revocations are in the audit log with who made them: on the /audit page and in the hash-chained rows.
 */
import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { API_ROUTES } from "../support/api-routes";
import { fillRoute, walkRoutes, type RouteAnswer, type RouteCall, type RouteParams } from "../support/route-walk";
import { checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { auditRows } from "./support/stored-rows";
import { api, createTestTenant, newTaskId, rid, testDbForFile, type Auth, type FullTestTenant } from "./helpers";

const handle = testDbForFile();

const NO_SUCH_ID = "00000000-0000-4000-8000-000000000000";

/**
 * The routes that need no credentials (the matrix's `public` rows; a webhook source's message is authenticated by its
 * own signature, not by a session or key); every other route is protected.
 */
const PUBLIC_ROUTES = [
  "GET /api/v1/openapi.json",
  "GET /api/v1/signing-keys",
  "POST /api/v1/invitations/[token]/accept",
  "POST /api/v1/webhooks/[source]",
];

/**
 * Every page of the app as a route pattern (`/maps/[mapId]`), from the `page.tsx` files under app/, with whether it
 * sits in the (dashboard) group, whose layout requires a live session.
 */
function pageRoutes(root = process.cwd()): Array<{ pattern: string; dashboard: boolean }> {
  const base = path.join(root, "app");
  const found: Array<{ pattern: string; dashboard: boolean }> = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "api" && !entry.name.startsWith("_")) walk(full);
      } else if (entry.name === "page.tsx") {
        const segments = path.relative(base, dir).split(path.sep).filter(Boolean);
        const pattern = "/" + segments.filter((s) => !/^\(.+\)$/.test(s)).join("/");
        found.push({ pattern, dashboard: segments[0] === "(dashboard)" });
      }
    }
  };
  walk(base);
  return found.sort((a, b) => a.pattern.localeCompare(b.pattern));
}

/** What the walk calls: every API route (an empty JSON body for the routes that read one), then every given page. */
function walkCalls(auth: Auth, params: RouteParams, routes: string[], pages: string[]): RouteCall[] {
  return [
    ...routes.map((route) => ({
      route,
      auth,
      params,
      body: API_ROUTES[route]!.body === "none" ? undefined : route === "POST /api/v1/events" ? { events: [] } : {},
    })),
    ...pages.map((pattern) => ({ route: `GET ${pattern}`, auth, params })),
  ];
}

/** An answer as a line of a failure message: the route or page, and the start of what it answered. */
function shown(a: RouteAnswer): string {
  return `${a.call.route}: ${a.status} ${a.code ?? ""} ${a.text.slice(0, 200)}`;
}

type World = { t: FullTestTenant; owner: { cookie: string }; params: RouteParams };
let world: World;

beforeAll(async () => {
  const t = await createTestTenant(handle.db);
  const owner = await signInAs(t, "owner");
  const taskId = newTaskId("walk");
  await checkpoint(t, taskId);
  const map = await api(owner).post<{ id: string }>("/api/v1/maps", {
    workflow: `walk-${rid()}`,
    title: `Walk map ${rid()}`,
  });
  expect(map.status, map.text).toBeLessThan(300);
  const ex = await api(owner).post<{ id: string }>(`/api/v1/maps/${map.body.id}/exercises`, {
    interruption_point: "after_intent",
  });
  expect(ex.status, ex.text).toBeLessThan(300);
  const inv = await api(owner).post<{ invitation_url: string }>("/api/v1/settings/invitations", {
    email: `walk-${rid()}@walk.test`,
    role: "viewer",
  });
  expect(inv.status, inv.text).toBeLessThan(300);
  world = {
    t,
    owner,
    params: {
      taskId,
      name: "publish_report",
      tool: "walk.tool",
      keyId: NO_SUCH_ID,
      userId: t.users.viewer.userId,
      mapId: map.body.id,
      exerciseId: ex.body.id,
      layer: "tools",
      token: inv.body.invitation_url.split("/").pop() ?? "",
      approvalId: NO_SUCH_ID,
      version: "1",
      ref: "walk-credential",
      action: "walk_action",
      eventId: "walk-no-such-event",
      endpointId: NO_SUCH_ID,
      deliveryId: "msg_walk",
      sha256: "0".repeat(64),
      source: "walk-source",
      secretId: NO_SUCH_ID,
      evidenceId: NO_SUCH_ID,
    },
  };
}, 120_000);

const apiRoutes = () => Object.keys(API_ROUTES).sort();
const dashboardPages = () => pageRoutes().filter((p) => p.dashboard);

/**
 * Walks every API route and every dashboard page with `auth`, and with no credentials, and returns what differs from
 * "refused like a signed-out visitor": a protected route must answer 401 `unauthorized` and a page must redirect to
 * /login with the page as callbackUrl; a public route must answer `auth` as it answers no credentials.
 */
async function walkExpectingSignedOut(
  auth: Auth,
): Promise<{ wrong: string[]; protectedRoutes: number; pages: number }> {
  const { params } = world;
  const routes = apiRoutes();
  const pages = dashboardPages();
  const patterns = pages.map((p) => p.pattern);
  const [asCaller, asNobody] = await Promise.all([
    walkRoutes(walkCalls(auth, params, routes, patterns)),
    walkRoutes(walkCalls(undefined, params, routes, patterns), 2),
  ]);
  const wrong: string[] = [];
  asCaller.forEach((a, i) => {
    const nobody = asNobody[i]!;
    if (i < routes.length) {
      const route = routes[i]!;
      if (PUBLIC_ROUTES.includes(route)) {
        if (a.status !== nobody.status || a.status >= 500)
          wrong.push(`${shown(a)}, and ${nobody.status} without credentials`);
      } else if (a.status !== 401 || a.code !== "unauthorized" || nobody.status !== 401) {
        wrong.push(`${shown(a)} (without credentials ${nobody.status})`);
      }
    } else {
      const page = pages[i - routes.length]!;
      const login = `/login?callbackUrl=${encodeURIComponent(fillRoute(page.pattern, params))}`;
      if (a.status !== 307 || !a.location?.endsWith(login) || a.location !== nobody.location) {
        wrong.push(
          `${a.call.route}: ${a.status} → ${a.location ?? "(no redirect)"} ${a.text.slice(0, 200)}; signed out: ${nobody.status} → ${nobody.location}`,
        );
      }
    }
  });
  return { wrong, protectedRoutes: routes.filter((r) => !PUBLIC_ROUTES.includes(r)).length, pages: pages.length };
}

describe("the walk's lists", () => {
  it("cover every API route of the registry and every page, and only the invitation and sign-in pages (with the refused single sign-on's) are outside the dashboard", () => {
    expect(apiRoutes().length).toBeGreaterThan(60);
    expect(PUBLIC_ROUTES.filter((r) => !(r in API_ROUTES))).toEqual([]);
    const outside = pageRoutes()
      .filter((p) => !p.dashboard)
      .map((p) => p.pattern);
    expect(outside).toEqual(["/invitations/[token]", "/login", "/login/refused"]);
    expect(dashboardPages().map((p) => p.pattern)).toEqual(
      expect.arrayContaining([
        "/",
        "/tasks",
        "/tasks/[taskId]",
        "/maps/[mapId]/exercises/[exerciseId]",
        "/settings/members",
        "/settings/api-keys",
        "/audit",
        "/account",
        "/policies",
      ]),
    );
  });
});

describe("removing a member", () => {
  it("refuses their session on every protected route and page at the next request, even a session row that outlived the removal", async () => {
    const { t, owner, params } = world;
    const admin = t.users.admin;
    const session = await signInAs(t, "admin");
    const spare = await signInAs(t, "admin");
    // Before: the session reads every GET route it may (none answers 401) and opens every dashboard page.
    const getRoutes = apiRoutes().filter((r) => r.startsWith("GET "));
    const before = await walkRoutes(
      walkCalls(
        session,
        params,
        getRoutes,
        dashboardPages().map((p) => p.pattern),
      ),
    );
    expect(before.filter((a) => a.status === 401 || a.status === 307 || a.status >= 500).map(shown)).toEqual([]);
    expect(before.slice(getRoutes.length).filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(
      dashboardPages().length - 1,
    );

    const removed = await api(owner).delete<{ removed: boolean; sessions_ended: number; audit_seq: number }>(
      `/api/v1/settings/members/${admin.userId}`,
    );
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toMatchObject({ removed: true, sessions_ended: 2 });

    const walk = await walkExpectingSignedOut(session);
    expect(walk.wrong).toEqual([]);
    expect(walk.protectedRoutes).toBe(apiRoutes().length - PUBLIC_ROUTES.length);

    // A session row that survived the removal (say a sign-in that raced it) still gets nothing: the membership is
    // checked on every request, not only the row.
    await handle.db.execute(
      sql`update sessions set ended_at = null, ended_reason = null where user_id = ${admin.userId} and tenant_id = ${t.tenantId}`,
    );
    const raced = await walkExpectingSignedOut(spare);
    expect(raced.wrong).toEqual([]);

    // The owner, meanwhile, works as before.
    expect((await api(owner).get("/api/v1/settings/members")).status).toBe(200);
  }, 180_000);
});

describe("revoking a runtime API key", () => {
  it("refuses the key on every protected route at the next request", async () => {
    const { owner } = world;
    const made = await api(owner).post<{ id: string; key: string }>("/api/v1/settings/api-keys", {
      name: `walk key ${rid(3)}`,
    });
    expect(made.status, made.text).toBe(200);
    expect((await api(made.body.key).get("/api/v1/tasks")).status).toBe(200);
    const revoked = await api(owner).post(`/api/v1/settings/api-keys/${made.body.id}/revoke`, {});
    expect(revoked.status, revoked.text).toBe(200);
    const walk = await walkExpectingSignedOut(made.body.key);
    expect(walk.wrong).toEqual([]);
    world.params.keyId = made.body.id;
  }, 180_000);
});

describe("the audit log", () => {
  it("shows both revocations with who made them, on the audit page and in the verified chain", async () => {
    const { t, owner, params } = world;
    expect(params.keyId).not.toBe(NO_SUCH_ID);
    const ownerEmail = t.users.owner.email;
    const [removal] = await auditRows(handle.db, t.tenantId, "member.removed");
    expect(removal).toMatchObject({
      actor_kind: "user",
      actor_label: ownerEmail,
      target: `user:${t.users.admin.userId}`,
      details: { email: t.users.admin.email, role: "admin", sessions_ended: 2 },
    });
    const [revocation] = await auditRows(handle.db, t.tenantId, "api_key.revoked");
    expect(revocation).toMatchObject({
      actor_kind: "user",
      actor_label: ownerEmail,
      target: `api_key:${params.keyId}`,
    });

    // The audit page, filtered to each target, shows the entry and who made it.
    for (const [target, action] of [
      [`user:${t.users.admin.userId}`, "member.removed"],
      [`api_key:${params.keyId}`, "api_key.revoked"],
    ] as const) {
      const page = await api(owner).get(`/audit?target=${encodeURIComponent(target)}`);
      expect(page.status).toBe(200);
      const rows = page.text.split('data-testid="audit-row"').slice(1);
      const row = rows.find((r) => r.includes(`>${action}<`));
      expect(row, `${action} on the audit page`).toBeDefined();
      expect(row).toContain(ownerEmail);
      expect(row).toContain(target);
    }
    const chain = await api(owner).get<{ valid: boolean }>("/api/v1/audit/verify");
    expect(chain.body.valid, chain.text).toBe(true);
  });
});
