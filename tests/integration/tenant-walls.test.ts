/**
 * Tenant walls in the database (docs/decisions/0016-tenant-walls.md): row-level security on every table
 * with a tenant_id column, the app role it binds, and the scoped database handles of db/walls.ts.
 * - Every tenant table has RLS on and a policy for custody_app (a new table without them fails here: see the recipe
 *   at the top of db/migrations/0016_tenant_walls.sql), and custody_app may not bypass it.
 * - A query that forgets its tenant filter returns only the scope's rows, and nothing at all without a scope; a write
 *   into another tenant is refused; nothing of the scope outlives its transaction on a pooled connection.
 * - The server's requests go through the app role (a grant taken away from custody_app breaks them).
 * - The same on PGlite, the embedded default.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { openDatabase, queryRows, type Db } from "@/db";
import type { DbScope } from "@/db/types";
import { APP_ROLE } from "@/db/walls";
import { pgCode } from "@/lib/domain/tx";
import { checkpoint } from "./support/custody-calls";
import { api, createTestTenant, newTaskId, signIn, type TestTenant } from "./helpers";

type Handle = Awaited<ReturnType<typeof openDatabase>>;

/** Tables of the public schema with a tenant_id column. */
async function tenantTables(db: Db): Promise<string[]> {
  const rows = await queryRows<{ table_name: string }>(
    db,
    sql`select c.table_name from information_schema.columns c
        join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
        join pg_class k on k.relname = c.table_name and k.relnamespace = 'public'::regnamespace
        where c.column_name = 'tenant_id' and c.table_schema = 'public' and t.table_type = 'BASE TABLE'
          and not k.relispartition
        order by c.table_name`,
  );
  return rows.map((r) => r.table_name);
}

/** Two tenants with a checkpointed task each (tasks, checkpoints, artifacts, events, audit rows, keys, members). */
async function twoTenants(h: Handle, viaApi: boolean): Promise<[TestTenant, TestTenant]> {
  const a = await createTestTenant(h.db, { roles: ["owner", "viewer"] });
  const b = await createTestTenant(h.db, { roles: ["owner"] });
  if (viaApi) {
    await checkpoint(a, newTaskId("wall-a"));
    await checkpoint(b, newTaskId("wall-b"));
  }
  return [a, b];
}

/** What `scope` sees of every tenant table when it forgets the tenant filter: rows per table, and foreign rows. */
async function unfilteredView(
  h: Handle,
  scope: DbScope | null,
  tables: string[],
): Promise<{ rows: number; foreign: number }> {
  const db = h.scoped(scope);
  let rows = 0;
  let foreign = 0;
  for (const t of tables) {
    const [r] = await queryRows<{ n: number; foreign: number }>(
      db,
      sql`select count(*)::int as n, count(*) filter (where tenant_id is distinct from ${scope?.tenantId ?? null}::uuid)::int as foreign
          from ${sql.identifier(t)}`,
    );
    rows += r!.n;
    foreign += r!.foreign;
  }
  return { rows, foreign };
}

/** The checks every engine must pass. */
async function expectWalls(h: Handle, opts: { viaApi: boolean }) {
  const tables = await tenantTables(h.db);
  expect(tables.length).toBeGreaterThanOrEqual(18);
  const [a, b] = await twoTenants(h, opts.viaApi);

  // Every tenant table: RLS on, a policy that names custody_app, and custody_app may read and write it.
  const missing = await queryRows<{ table: string; rls: boolean; policies: number; select: boolean; insert: boolean }>(
    h.db,
    sql`select c.relname as table, c.relrowsecurity as rls,
               (select count(*)::int from pg_policy p where p.polrelid = c.oid
                  and (select oid from pg_roles where rolname = ${APP_ROLE}) = any (p.polroles)) as policies,
               has_table_privilege(${APP_ROLE}, c.oid, 'SELECT') as select, has_table_privilege(${APP_ROLE}, c.oid, 'INSERT') as insert
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'public' and c.relname in (${sql.join(
          tables.map((t) => sql`${t}`),
          sql`, `,
        )})`,
  );
  expect(
    missing.filter((m) => !m.rls || m.policies < 1 || !m.select || !m.insert),
    "tenant tables without RLS, policy or grants",
  ).toEqual([]);

  // The partitions of a partitioned table (events, decision 0054) are reached only through it: the app role holds no
  // privilege on any of them, and each has the wall too.
  const partitions = await queryRows<{ table: string; rls: boolean; any: boolean }>(
    h.db,
    sql`select c.relname as table, c.relrowsecurity as rls,
               has_table_privilege(${APP_ROLE}, c.oid, 'SELECT,INSERT,UPDATE,DELETE') as any
        from pg_class c where c.relnamespace = 'public'::regnamespace and c.relispartition and c.relkind in ('r', 'p')`,
  );
  expect(partitions.length).toBeGreaterThanOrEqual(3);
  expect(partitions.filter((p) => !p.rls || p.any)).toEqual([]);

  // The app role cannot bypass the policies, nor own (and so escape) them. Temporary tables do not count: the one it
  // may own is the ingest staging table of its own session, which holds only the batch its transaction is storing
  // (decision 0021).
  const [role] = await queryRows<{ rolbypassrls: boolean; rolsuper: boolean; owns: number }>(
    h.db,
    sql`select r.rolbypassrls, r.rolsuper,
               (select count(*)::int from pg_class c where c.relowner = r.oid and c.relpersistence <> 't') as owns
        from pg_roles r where r.rolname = ${APP_ROLE}`,
  );
  expect(role).toEqual({ rolbypassrls: false, rolsuper: false, owns: 0 });

  // A query that forgets its tenant filter: A sees only A's rows (and some), B only B's, no scope sees nothing.
  const owner = await queryRows<{ n: number }>(
    h.db,
    sql`select count(*)::int as n from api_keys where tenant_id in (${a.tenantId}, ${b.tenantId})`,
  );
  expect(owner[0]!.n).toBe(2);
  const seenByA = await unfilteredView(h, { tenantId: a.tenantId }, tables);
  expect(seenByA.foreign).toBe(0);
  expect(seenByA.rows).toBeGreaterThan(0);
  const seenByB = await unfilteredView(h, { tenantId: b.tenantId }, tables);
  expect(seenByB.foreign).toBe(0);
  expect(await unfilteredView(h, null, tables)).toEqual({ rows: 0, foreign: 0 });
  const aKeys = await queryRows<{ tenant_id: string }>(
    h.scoped({ tenantId: a.tenantId }),
    sql`select tenant_id from api_keys`,
  );
  expect(aKeys.map((k) => k.tenant_id)).toEqual([a.tenantId]);

  // Inside a transaction too, and the scope's role is the app role.
  const inTx = await h
    .scoped({ tenantId: a.tenantId })
    .transaction(async (tx) =>
      queryRows<{ n: number; who: string }>(tx, sql`select count(*)::int as n, current_user as who from api_keys`),
    );
  expect(inTx).toEqual([{ n: 1, who: APP_ROLE }]);

  // Writing into another tenant is refused by the policy (42501), and changes nothing.
  const write = queryRows(
    h.scoped({ tenantId: a.tenantId }),
    sql`insert into principal_revocations (tenant_id, principal, reason, revoked_by) values (${b.tenantId}, 'tenant/x:user/1', 'walls test', 'walls test')`,
  );
  await expect(write).rejects.toSatisfy((err: unknown) => pgCode(err) === "42501");
  const update = await queryRows(
    h.scoped({ tenantId: a.tenantId }),
    sql`update api_keys set name = 'moved' where tenant_id = ${b.tenantId} returning 1`,
  );
  expect(update).toEqual([]);

  // A person sees their own memberships in every workspace, and nobody else's there.
  const [both] = await queryRows<{ id: string }>(
    h.db,
    sql`insert into tenants (slug, name) values (${`w-${newTaskId()}`.toLowerCase()}, 'walls second') returning id`,
  );
  const viewer = a.users.viewer!.userId;
  await h.db.execute(
    sql`insert into memberships (tenant_id, user_id, role) values (${both!.id}, ${viewer}, 'viewer'), (${both!.id}, ${b.users.owner!.userId}, 'owner')`,
  );
  const person = await queryRows<{ tenant_id: string; user_id: string }>(
    h.scoped({ tenantId: a.tenantId, userId: viewer }),
    sql`select tenant_id, user_id from memberships where tenant_id = ${both!.id}`,
  );
  expect(person).toEqual([{ tenant_id: both!.id, user_id: viewer }]);

  // Nothing of the scope outlives its transaction (the pool hands the connection to the owner next).
  const [after] = await queryRows<{ who: string; tenant: string | null }>(
    h.db,
    sql`select current_user as who, nullif(current_setting('app.tenant_id', true), '') as tenant`,
  );
  expect(after).toEqual({ who: expect.not.stringMatching(APP_ROLE), tenant: null });
}

describe("tenant walls on PostgreSQL", () => {
  it("walls every tenant table, and a query that forgets its tenant filter sees only its scope's rows", async () => {
    const h = await openDatabase({ url: inject("databaseUrl"), max: 1 });
    try {
      await expectWalls(h, { viaApi: true });
    } finally {
      await h.close();
    }
  });

  it("serves API requests and pages as the app role (a grant taken from custody_app breaks them)", async () => {
    const h = await openDatabase({ url: inject("databaseUrl"), max: 1 });
    const t = await createTestTenant(h.db, { roles: ["viewer"] });
    const taskId = newTaskId("wall-page");
    await checkpoint(t, taskId);
    const cookie = await signIn(t.users.viewer!.email, t.password);
    try {
      expect((await api(t.apiKey).get("/api/v1/tasks")).status).toBe(200);
      expect((await api({ cookie }).request("GET", "/tasks")).text).toContain(taskId);
      await h.db.execute(sql.raw(`revoke select on tasks from ${APP_ROLE}`));
      expect((await api(t.apiKey).get("/api/v1/tasks")).status).toBe(500);
      expect((await api({ cookie }).request("GET", "/tasks")).text).not.toContain(taskId);
    } finally {
      await h.db.execute(sql.raw(`grant select on tasks to ${APP_ROLE}`));
      await h.close();
    }
    expect((await api(t.apiKey).get("/api/v1/tasks")).status).toBe(200);
  });
});

describe("tenant walls on PGlite", () => {
  it("holds the same way on the embedded database", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-walls-"));
    const h = await openDatabase({ dir });
    try {
      await expectWalls(h, { viaApi: false });
    } finally {
      await h.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
