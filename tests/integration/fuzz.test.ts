/**
 * Property-based tests of every JSON route (decisions 0008, 0009): bodies generated from each route's zod
 * schema (tests/support/api-routes.ts lists the routes; tests/support/json-arbitrary.ts makes and mutates the
 * bodies) are sent through the real HTTP API, and for every case:
 * - the answer is never a 5xx;
 * - a refused request (4xx) changes no row of any of the tenant's tables (no partial writes);
 * - no planted credential is stored anywhere in the tenant's rows.
 * `FUZZ_RUNS` cases per route (default 12 in CI; `npm run fuzz` runs 300). Each route gets its own tenant, so a
 * lookup registered by one case can never be called by another route's case.
 */
import fc from "fast-check";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { API_ROUTES, routeFileMethods, type RouteSpec } from "../support/api-routes";
import { bodiesOf, casesOf } from "../support/json-arbitrary";
import { checkpoint } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { unknownEffect } from "./support/seeding";
import { api, createTestTenant, makeRecord, newTaskId, testDbForFile, type Auth } from "./helpers";

const handle = testDbForFile();
const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

/**
 * Row counts of every table with a tenant_id column, for one tenant (new tables are picked up by themselves). The audit
 * rows of refusals and the receipts kept as evidence are left out: a refused intent or receipt is audited and a refused
 * receipt kept by design (decision 0006), and neither changes custody state.
 */
async function tenantCounts(tenantId: string): Promise<Record<string, number>> {
  const tables = await queryRows<{ table_name: string }>(
    handle.db,
    sql`select table_name from information_schema.columns where column_name = 'tenant_id' and table_schema = 'public' order by table_name`,
  );
  const counts: Record<string, number> = {};
  for (const { table_name } of tables) {
    if (table_name === "unapplied_receipts") continue;
    const refusal = table_name === "audit_log" ? sql`and not details ? 'refused'` : sql``;
    const [row] = await queryRows<{ n: string | number }>(
      handle.db,
      sql`select count(*) as n from ${sql.identifier(table_name)} where tenant_id = ${tenantId} ${refusal}`,
    );
    counts[table_name] = Number(row!.n);
  }
  return counts;
}

/** All of the tenant's rows as text. */
async function tenantText(tenantId: string): Promise<string> {
  const tables = [...Object.keys(await tenantCounts(tenantId)), "unapplied_receipts"];
  let text = "";
  for (const table of tables) {
    const [row] = await queryRows<{ t: string | null }>(
      handle.db,
      sql`select json_agg(x)::text as t from ${sql.identifier(table)} x where tenant_id = ${tenantId}`,
    );
    text += row?.t ?? "";
  }
  return text;
}

/** The URL of a route with its parameters filled for a tenant prepared for it. */
type Prepared = { url: string; auth: Auth; tenantId: string; taskId: string };

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/**
 * Brings generated bodies closer to what the route accepts where the schema cannot say it (the task id of the URL, an
 * idempotency key's characters, a type known for its plane), so that valid cases reach the writes, not only the
 * validation; mutations are applied afterwards.
 */
const FIT: Record<string, (body: unknown, p: Prepared, i: number) => unknown> = {
  "PUT /api/v1/tasks/[taskId]": (b, p) =>
    isObject(b)
      ? {
          ...b,
          task_id: p.taskId,
          principal: makeRecord(p.taskId).principal,
          phase: "fuzzing",
          policy_version: "policy-v1",
          side_effects: {},
        }
      : b,
  "POST /api/v1/events": (b, p, i) =>
    isObject(b) && Array.isArray(b.events)
      ? {
          events: b.events.map((e, k) =>
            isObject(e)
              ? {
                  ...e,
                  id: `fuzz-${i}-${k}-${String(e.id).slice(0, 20)}`,
                  task_id: p.taskId,
                  plane: "tools",
                  type: "tool.called",
                }
              : e,
          ),
        }
      : b,
  "POST /api/v1/tasks/[taskId]/side-effects/[name]/intent": (b, _p, i) =>
    isObject(b) ? { ...b, idempotency_key: `fuzz-key-${i}` } : b,
};

async function prepare(route: string, spec: RouteSpec): Promise<Prepared> {
  const t = await createTestTenant(handle.db, { roles: ["owner", "approver", "responder", "viewer"] });
  const auth: Auth =
    spec.auth === "runtime" ? t.apiKey : spec.auth === "public" ? undefined : await signInAs(t, spec.auth);
  const taskId = newTaskId("fuzz");
  await checkpoint(t, taskId);
  let effect = "fuzz_effect";
  let effectTask = taskId;
  if (route.includes("/reconcile")) ({ taskId: effectTask, name: effect } = await unknownEffect(handle.db, t));
  const owner = route.includes("[mapId]") || route.includes("[token]") ? await signInAs(t, "owner") : undefined;
  let mapId = "";
  let exerciseId = "";
  let token = "";
  if (route.includes("[mapId]")) {
    const map = await api(owner).post<{ id: string }>("/api/v1/maps", { workflow: "fuzzing", title: "Fuzzed map" });
    mapId = map.body.id;
    if (route.includes("[exerciseId]")) {
      const ex = await api(owner).post<{ id: string }>(`/api/v1/maps/${mapId}/exercises`, {
        interruption_point: "after_intent",
      });
      if (ex.status !== 201 && ex.status !== 200) throw new Error(`exercise for fuzzing: ${ex.status} ${ex.text}`);
      exerciseId = ex.body.id;
    }
  }
  let approvalId = "";
  if (route.includes("[approvalId]")) {
    // A pending request made by the runtime (so the approver is not its requester).
    const res = await api(t.apiKey).post<{ error: { details: { approval_id: string } } }>(
      `/api/v1/tasks/${taskId}/side-effects/fuzz_publish/intent`,
      {
        idempotency_key: `fuzz-approval-${newTaskId()}`,
        payload_digest: "a".repeat(64),
        action: "publish_report",
        mutation: true,
        attempt: 1,
        requires_approval: true,
      },
    );
    approvalId = res.body.error?.details?.approval_id ?? "";
    if (!approvalId) throw new Error(`approval for fuzzing: ${res.status} ${res.text}`);
  }
  if (route.includes("[token]")) {
    const inv = await api(owner).post<{ invitation_url: string }>("/api/v1/settings/invitations", {
      email: `fuzz-${newTaskId()}@fuzz.test`,
      role: "viewer",
    });
    token = inv.body.invitation_url.split("/").pop() ?? "";
  }
  const url = route
    .replace(/^[A-Z]+ /, "")
    .replace("[taskId]", effectTask)
    .replace("[name]", effect)
    .replace("[tool]", "fuzz.tool")
    .replace("[keyId]", "00000000-0000-4000-8000-000000000000")
    .replace("[userId]", t.users.viewer!.userId)
    .replace("[mapId]", mapId)
    .replace("[layer]", "tools")
    .replace("[exerciseId]", exerciseId)
    .replace("[token]", token)
    .replace("[version]", "1")
    .replace("[ref]", "fuzz-credential")
    .replace("[approvalId]", approvalId)
    .replace("[action]", "fuzz_action");
  return { url, auth, tenantId: t.tenantId, taskId: effectTask };
}

const jsonRoutes = Object.entries(API_ROUTES).filter(([, spec]) => spec.body !== "none" && spec.schema);

describe("the route list", () => {
  it("names every method of every route file under app/api/v1 (add new routes to tests/support/api-routes.ts)", () => {
    const files = routeFileMethods();
    expect(files.length).toBeGreaterThan(20);
    expect(files.filter((r) => !(r in API_ROUTES))).toEqual([]);
    expect(Object.keys(API_ROUTES).filter((r) => !files.includes(r))).toEqual([]);
  });
});

describe.each(jsonRoutes)("%s with generated and mutated bodies", (route, spec) => {
  it(`answers no 5xx, writes nothing when it refuses, stores no planted credential (${RUNS} cases)`, async () => {
    const prepared = await prepare(route, spec);
    const method = route.split(" ")[0]!;
    const generated =
      spec.envelope === "events"
        ? fc.array(bodiesOf(spec.schema!), { minLength: 1, maxLength: 3 }).map((events) => ({ events }))
        : bodiesOf(spec.schema!);
    const fit = FIT[route];
    const valid = fit
      ? fc.tuple(generated, fc.nat(), fc.boolean()).map(([b, i, keep]) => (keep ? b : fit(b, prepared, i)))
      : generated;
    let accepted = 0;
    const planted: string[] = [];
    const failures: string[] = [];
    await fc.assert(
      fc.asyncProperty(casesOf(valid), async ({ text, secret, mutation }) => {
        if (secret) planted.push(secret);
        const before = await tenantCounts(prepared.tenantId);
        const res = await api(prepared.auth).request(method, prepared.url, { raw: text });
        const shown = `${mutation}: ${text.slice(0, 160)} → ${res.status} ${res.text.slice(0, 200)}`;
        if (res.status >= 500 || res.status === 0) failures.push(shown);
        expect(res.status, shown).toBeLessThan(500);
        // An intent answered approval_required / approval_mismatch records the request (or the offered payload) by
        // design (docs/concepts.md#approvals): the approver needs it in the queue.
        const approvalAnswer = res.status === 403 && /"code":"approval_(required|mismatch)"/.test(res.text);
        if (res.status >= 400 && !approvalAnswer) expect(await tenantCounts(prepared.tenantId), shown).toEqual(before);
        else accepted += 1;
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    expect(failures).toEqual([]);
    if (process.env.FUZZ_VERBOSE) console.log(`${route}: ${accepted} of ${RUNS} cases accepted`);
    const stored = await tenantText(prepared.tenantId);
    expect(planted.filter((s) => stored.includes(s))).toEqual([]);
  }, 600_000);
});
