/**
 * The schema stays distributable by tenant (docs/distribution.md): walks the migrated test database's catalog and
 * fails when
 *   - a table is neither a reference table nor a tenant table with `tenant_id uuid not null`;
 *   - a tenant table's primary key, unique index or foreign key to another tenant table does not lead with
 *     `tenant_id` (Citus needs the distribution column in each of them);
 *   - a reference table points at a tenant table;
 *   - a tenant table has no row-level security policy on `app_tenant_id()` (the wall that keeps every statement to
 *     one tenant);
 *   - docs/distribution.md's Citus commands do not name exactly the tables found here, each the right way.
 */
import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { testDbForFile } from "./helpers";

const handle = testDbForFile();

/** Tables copied whole to every node: global, or found by a secret's hash before the tenant is known. */
const REFERENCE_TABLES = ["tenants", "users", "sign_in_throttle", "api_keys", "sessions", "invitations"];

type Key = {
  table: string;
  name: string;
  kind: "primary key" | "unique index" | "foreign key";
  def: string;
  first: string | null;
  target: string | null;
};

async function tables(): Promise<Array<{ table: string; tenantColumn: string | null; rls: boolean }>> {
  return queryRows(
    handle.db,
    sql`select c.relname as "table",
               (select format_type(a.atttypid, a.atttypmod) || case when a.attnotnull then ' not null' else '' end
                  from pg_attribute a where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped) as "tenantColumn",
               c.relrowsecurity as rls
          from pg_class c join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
         order by 1`,
  );
}

async function keys(): Promise<Key[]> {
  return queryRows(
    handle.db,
    sql`select c.relname as "table", i.relname as name,
               case when x.indisprimary then 'primary key' else 'unique index' end as kind,
               pg_get_indexdef(i.oid) as def,
               pg_get_indexdef(i.oid, 1, true) as first, null as target
          from pg_index x join pg_class c on c.oid = x.indrelid join pg_class i on i.oid = x.indexrelid
          join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = 'public' and x.indisunique and c.relkind in ('r', 'p') and not c.relispartition
        union all
        select c.relname, con.conname, 'foreign key', pg_get_constraintdef(con.oid),
               (select a.attname from pg_attribute a where a.attrelid = con.conrelid and a.attnum = con.conkey[1]),
               t.relname
          from pg_constraint con join pg_class c on c.oid = con.conrelid join pg_class t on t.oid = con.confrelid
          join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = 'public' and con.contype = 'f' and not c.relispartition
         order by 1, 2`,
  );
}

describe("the schema stays distributable by tenant (docs/distribution.md)", () => {
  it("every table is a reference table or a tenant table with tenant_id uuid not null", async () => {
    const wrong = (await tables())
      .filter((t) => !REFERENCE_TABLES.includes(t.table) && t.tenantColumn !== "uuid not null")
      .map((t) => `${t.table}: tenant_id ${t.tenantColumn ?? "missing"}`);
    expect(wrong, "a tenant table needs tenant_id uuid not null, or belongs in REFERENCE_TABLES with a reason").toEqual(
      [],
    );
  });

  it("every primary key, unique index and foreign key between tenant tables leads with tenant_id", async () => {
    const wrong = (await keys())
      .filter((k) => !REFERENCE_TABLES.includes(k.table))
      .filter((k) => !(k.kind === "foreign key" && REFERENCE_TABLES.includes(k.target!)))
      .filter((k) => k.first !== "tenant_id")
      .map((k) => `${k.table}.${k.name} (${k.kind}): ${k.def}`);
    expect(wrong).toEqual([]);
  });

  it("reference tables point only at reference tables", async () => {
    const wrong = (await keys())
      .filter(
        (k) => k.kind === "foreign key" && REFERENCE_TABLES.includes(k.table) && !REFERENCE_TABLES.includes(k.target!),
      )
      .map((k) => `${k.table}.${k.name} → ${k.target}`);
    expect(wrong).toEqual([]);
  });

  it("every table with tenant rows is walled to one tenant by a row-level security policy", async () => {
    const policies = await queryRows<{ table: string; qual: string }>(
      handle.db,
      sql`select tablename as "table", coalesce(qual, '') as qual from pg_policies where schemaname = 'public'`,
    );
    const walled = new Set(policies.filter((p) => p.qual.includes("app_tenant_id()")).map((p) => p.table));
    const wrong = (await tables())
      .filter((t) => t.tenantColumn !== null && (!t.rls || !walled.has(t.table)))
      .map((t) => t.table);
    expect(wrong).toEqual([]);
  });

  it("docs/distribution.md distributes every tenant table and references every reference table", async () => {
    const doc = fs.readFileSync(path.join(process.cwd(), "docs", "distribution.md"), "utf8");
    const referenced = [...doc.matchAll(/create_reference_table\('([a-z_]+)'\)/g)].map((m) => m[1]).sort();
    const distributed = [...doc.matchAll(/create_distributed_table\('([a-z_]+)', 'tenant_id'/g)]
      .map((m) => m[1])
      .sort();
    const all = (await tables()).map((t) => t.table);
    expect(referenced).toEqual([...REFERENCE_TABLES].sort());
    expect(distributed).toEqual(all.filter((t) => !REFERENCE_TABLES.includes(t)).sort());
  });
});
